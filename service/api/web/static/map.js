// The map panel on Leaflet (vendored from npm by scripts/vendor_ui.sh; the global `L`).
// Leaflet, not MapLibre: it draws with SVG/canvas, no WebGL, so it renders the same in
// headless Chromium on a CPU-only box as in a browser. Basemap: Natural Earth countries
// (world-atlas TopoJSON: land, coastlines, borders), states and provinces (Natural Earth
// 1:50m admin-1, where it has them: Brazil, the USA, Canada, Australia) and town labels, all
// served by Carta itself; raster tiles instead when a tile URL is configured. On top: document footprints,
// georeferenced page images, geo tags, H3 cells, POIs (coloured by category) and pair lines.
// Tools: pan, draw a circle (radius filter) or a box (bbox filter).

/* global L, topojson */

const EARTH_R = 6371008.8;
const RAD = Math.PI / 180;
const BASEMAP = "/ui/vendor/basemap";
// Category colours: distinguishable on the pale basemap, 3:1 against white at least.
const PALETTE = ["#c2410c", "#1d4ed8", "#15803d", "#7e22ce", "#be123c", "#0e7490", "#a16207", "#4d7c0f"];
const ORDER = ["footprints", "rasters", "h3", "roads", "tags", "graph"]; // areas under lines under points
const ADMIN1_LINES_ZOOM = 3; // state lines from this zoom in, their names from ADMIN1_LABELS_ZOOM
const ADMIN1_LABELS_ZOOM = 4;

/** Great-circle distance in metres. */
export function haversine(a, b) {
  const dLat = (b.lat - a.lat) * RAD;
  const dLon = (b.lon - a.lon) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_R * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** A circle on the sphere as a closed ring of [lon, lat]. */
export function circleRing(lat, lon, radius, steps = 72) {
  const d = radius / EARTH_R;
  const ring = [];
  for (let i = 0; i <= steps; i++) {
    const brg = (2 * Math.PI * i) / steps;
    const la = Math.asin(Math.sin(lat * RAD) * Math.cos(d) + Math.cos(lat * RAD) * Math.sin(d) * Math.cos(brg));
    const lo =
      lon * RAD +
      Math.atan2(Math.sin(brg) * Math.sin(d) * Math.cos(lat * RAD), Math.cos(d) - Math.sin(lat * RAD) * Math.sin(la));
    ring.push([lo / RAD, la / RAD]);
  }
  return ring;
}

/** The geometry a geo filter ({lat, lon, radius_m}, {bbox} or {h3, cells: GeoJSON features})
 * covers, as GeoJSON. */
export function filterGeometry(filter) {
  if (!filter) return null;
  if (filter.h3) return { type: "GeometryCollection", geometries: (filter.cells || []).map((f) => f.geometry) };
  if (filter.bbox) {
    const [w, s, e, n] = filter.bbox;
    return { type: "Polygon", coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] };
  }
  if (filter.radius_m) return { type: "Polygon", coordinates: [circleRing(filter.lat, filter.lon, filter.radius_m)] };
  return null;
}

function eachCoord(geometry, fn) {
  if (!geometry) return;
  const walk = (c) => (typeof c[0] === "number" ? fn(c) : c.forEach(walk));
  if (geometry.type === "GeometryCollection") geometry.geometries.forEach((g) => eachCoord(g, fn));
  else walk(geometry.coordinates);
}

/** [w, s, e, n] of GeoJSON geometries, or null when there are none. */
export function boundsOf(geometries) {
  let b = null;
  for (const g of geometries)
    eachCoord(g, ([lon, lat]) => {
      if (!b) b = [lon, lat, lon, lat];
      else b = [Math.min(b[0], lon), Math.min(b[1], lat), Math.max(b[2], lon), Math.max(b[3], lat)];
    });
  return b;
}

/** Lines and rings that cross the antimeridian (Fiji, Chukotka) made continuous (longitudes
 * past 180): drawn as they come, each crossing is a line across the whole world. In place. */
function unwrapLongitudes(geometry) {
  const walk = (coords) => {
    if (typeof coords[0][0] !== "number") return coords.forEach(walk);
    for (let i = 1; i < coords.length; i++) {
      const prev = coords[i - 1][0];
      while (coords[i][0] - prev > 180) coords[i][0] -= 360;
      while (coords[i][0] - prev < -180) coords[i][0] += 360;
    }
  };
  if (geometry && geometry.coordinates) walk(geometry.coordinates);
  return geometry;
}

/** The four corners (upper-left, upper-right, lower-left, lower-right) of a raster's
 * footprint ring, for an image rotated less than 45 degrees (a world file's usual case). */
export function rasterCorners(footprint) {
  const ring = footprint && footprint.type === "Polygon" ? footprint.coordinates[0] : null;
  if (!ring || ring.length < 4) return null;
  const pick = (score) => ring.reduce((best, p) => (score(p) > score(best) ? p : best));
  const ll = (p) => [p[1], p[0]];
  return {
    ul: ll(pick(([lon, lat]) => lat - lon)),
    ur: ll(pick(([lon, lat]) => lat + lon)),
    ll: ll(pick(([lon, lat]) => -lat - lon)),
    lr: ll(pick(([lon, lat]) => lon - lat)),
  };
}

/** A page image drawn on its footprint: an affine CSS transform that puts the image's
 * upper-left, upper-right and lower-left corners on theirs (the fourth follows to well under
 * a pixel for a map-sized raster). Redrawn on every zoom and view reset. */
const AffineImage = L.Layer.extend({
  initialize(url, corners, options) {
    this.url = url;
    this.corners = corners;
    L.setOptions(this, options);
  },
  onAdd(map) {
    this.img = L.DomUtil.create("img", `raster-overlay ${this.options.className || ""}`);
    this.img.alt = this.options.alt || "";
    this.img.style.transformOrigin = "0 0";
    this.img.style.position = "absolute";
    this.img.style.opacity = this.options.opacity ?? 0.8;
    this.img.addEventListener("load", () => this.place());
    this.img.src = this.url;
    this.getPane().append(this.img);
    map.on("zoomend viewreset", this.place, this);
    this.place();
  },
  onRemove(map) {
    this.img.remove();
    map.off("zoomend viewreset", this.place, this);
  },
  setOpacity(value) {
    this.options.opacity = value;
    if (this.img) this.img.style.opacity = value;
  },
  place() {
    const { img, corners } = this;
    if (!img || !img.naturalWidth || !this._map) return;
    const p = (c) => this._map.latLngToLayerPoint(c);
    const [ul, ur, ll] = [p(corners.ul), p(corners.ur), p(corners.ll)];
    const [w, h] = [img.naturalWidth, img.naturalHeight];
    const m = [(ur.x - ul.x) / w, (ur.y - ul.y) / w, (ll.x - ul.x) / h, (ll.y - ul.y) / h, ul.x, ul.y];
    img.style.width = `${w}px`;
    img.style.height = `${h}px`;
    img.style.transform = `matrix(${m.join(",")})`;
    img.dataset.placed = "true";
  },
});

export class GeoMap {
  /** container: the map's element; options: {tileUrl, attribution, onFilter(filter), label}. */
  constructor(container, options = {}) {
    this.container = container;
    this.options = options;
    this.mode = "pan";
    this.layers = new Map(); // name -> {features, visible, group}
    this.filter = null;
    this.rasterOpacity = 0.8;
    this.categories = new Map(); // POI category -> colour
    this.map = L.map(container, {
      zoomControl: false, // the panel has its own buttons
      attributionControl: false, // the credit line is under the map
      zoomAnimation: false, // a view change is done when the call returns: no race to wait out
      fadeAnimation: false,
      markerZoomAnimation: false,
      keyboard: false, // ours (below): Leaflet's zooms 3 levels for shift, which "+" needs
      worldCopyJump: true,
      minZoom: 1,
      maxZoom: 19,
    });
    for (const [i, name] of ["basemap", "borders", "labels", ...ORDER, "filter"].entries()) {
      const pane = this.map.createPane(name);
      pane.style.zIndex = String(250 + i * 10);
      if (name === "labels") pane.style.pointerEvents = "none";
    }
    this.canvas = L.canvas({ pane: "basemap", padding: 0.5 });
    this.bordersCanvas = L.canvas({ pane: "borders", padding: 0.5 }); // state lines over the countries
    container.tabIndex = 0;
    container.addEventListener("keydown", (e) => this.key(e));
    container.setAttribute("role", "application");
    container.setAttribute("aria-label", options.label || "Map");
    container.setAttribute("aria-roledescription", "map");
    this.map.setView([-12, -40], 3);
    this.map.on("zoomend moveend", () => this.viewChanged());
    this.basemap = options.tileUrl ? this.tiles(options.tileUrl) : this.loadBasemap();
    this.initDrawing();
    new ResizeObserver(() => this.map.invalidateSize({ pan: false })).observe(container);
    this.viewChanged();
  }

  get zoom() {
    return this.map.getZoom();
  }

  tiles(url) {
    L.tileLayer(url, { className: "tiles", maxZoom: 19 }).addTo(this.map);
    this.container.dataset.basemap = "tiles";
    return Promise.resolve();
  }

  /** Natural Earth countries (110m at world scale, 50m closer in) and town labels. */
  async loadBasemap() {
    const get = async (name) => {
      const r = await fetch(`${BASEMAP}/${name}`);
      if (!r.ok) throw new Error(`${name}: ${r.status}`);
      return r.json();
    };
    try {
      const [coarse, fine, places] = await Promise.all([get("countries-110m.json"), get("countries-50m.json"), get("places.json")]);
      this.world = { coarse: this.worldLayers(coarse), fine: this.worldLayers(fine), detail: null };
      this.places = places;
      await this.loadAdmin1(get);
      this.container.dataset.basemap = "ready";
      this.viewChanged();
    } catch (err) {
      this.container.dataset.basemap = "missing";
      console.warn(`offline basemap not loaded (run scripts/vendor_ui.sh): ${err.message}`);
    }
  }

  /** States and provinces: their lines (drawn from ADMIN1_LINES_ZOOM) and names (from
   * ADMIN1_LABELS_ZOOM). A vendored folder older than the layer just goes without it. */
  async loadAdmin1(get) {
    try {
      const { lines, labels } = await get("admin1.json");
      this.admin1 = L.geoJSON(lines, {
        renderer: this.bordersCanvas,
        interactive: false,
        style: { color: "#a89c8a", weight: 0.7, dashArray: "1 3", lineCap: "round" },
      });
      this.admin1Labels = labels;
      this.container.dataset.admin1 = String(labels.length);
    } catch (err) {
      this.container.dataset.admin1 = "missing";
      console.warn(`states and provinces not loaded (run scripts/vendor_ui.sh): ${err.message}`);
    }
  }

  worldLayers(topo) {
    const countries = topojson.feature(topo, topo.objects.countries);
    countries.features.forEach((f) => unwrapLongitudes(f.geometry));
    const borders = unwrapLongitudes(topojson.mesh(topo, topo.objects.countries, (a, b) => a !== b));
    const coast = unwrapLongitudes(topojson.mesh(topo, topo.objects.countries, (a, b) => a === b));
    const style = { renderer: this.canvas, interactive: false };
    return L.layerGroup([
      L.geoJSON(countries, { ...style, style: { stroke: false, fillColor: "#f4f1ea", fillOpacity: 1 } }),
      L.geoJSON(borders, { ...style, style: { color: "#9a8f80", weight: 0.8, dashArray: "3 2" } }),
      L.geoJSON(coast, { ...style, style: { color: "#5b7fa3", weight: 1 } }),
    ]);
  }

  /** Natural Earth 1:10m for town-level views, fetched the first time one is shown (3.6 MB). */
  async loadDetail() {
    if (this.detailLoading) return;
    this.detailLoading = true;
    try {
      const r = await fetch(`${BASEMAP}/countries-10m.json`);
      if (!r.ok) throw new Error(`countries-10m.json: ${r.status}`);
      this.world.detail = this.worldLayers(await r.json());
      this.viewChanged();
    } catch (err) {
      console.warn(`detailed coastlines not loaded: ${err.message}`);
    }
  }

  viewChanged() {
    if (this.world) {
      const z = this.zoom;
      if (z >= 7 && !this.world.detail) this.loadDetail();
      const pick = z >= 7 && this.world.detail ? "detail" : z >= 4 ? "fine" : "coarse";
      for (const [name, layer] of Object.entries(this.world)) {
        if (!layer) continue;
        if (name === pick && !this.map.hasLayer(layer)) layer.addTo(this.map);
        if (name !== pick && this.map.hasLayer(layer)) layer.remove();
      }
      if (this.admin1) {
        const show = z >= ADMIN1_LINES_ZOOM;
        if (show && !this.map.hasLayer(this.admin1)) this.admin1.addTo(this.map);
        if (!show && this.map.hasLayer(this.admin1)) this.admin1.remove();
      }
    }
    this.drawPlaces();
    this.container.dataset.zoom = String(this.zoom);
  }

  /** State names (from ADMIN1_LABELS_ZOOM until town level), then town names in view,
   * biggest first, without overlaps; more of them as one zooms in. */
  drawPlaces() {
    if (!this.places) return;
    if (!this.placeLayer) this.placeLayer = L.layerGroup().addTo(this.map);
    this.placeLayer.clearLayers();
    const z = this.zoom;
    const minPop = z <= 3 ? 8e6 : z <= 4 ? 2e6 : z <= 5 ? 8e5 : z <= 6 ? 3e5 : z <= 8 ? 1e5 : 0;
    const view = this.map.getBounds().pad(0.1);
    // labels as boxes (width from the name's length, a little room around): a name is left
    // out where it would touch one already placed
    const taken = [];
    const free = (pt, name, charWidth) => {
      const w = name.length * charWidth + 8;
      const box = [pt.x - w / 2, pt.y - 9, pt.x + w / 2, pt.y + 9];
      if (taken.some((b) => box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3])) return false;
      taken.push(box);
      return true;
    };
    if (this.admin1Labels && z >= ADMIN1_LABELS_ZOOM && z <= 9) {
      for (const [name, lat, lon, country] of this.admin1Labels) {
        if (!view.contains([lat, lon])) continue;
        const pt = this.map.latLngToContainerPoint([lat, lon]);
        if (!free(pt, name, 7.6)) continue; // upper case, spaced out
        const icon = L.divIcon({ className: "admin1-label", html: "", iconSize: null });
        const marker = L.marker([lat, lon], { icon, pane: "labels", interactive: false, keyboard: false });
        marker.addTo(this.placeLayer);
        const el = marker.getElement();
        el.append(labelText(name));
        el.dataset.country = country;
      }
    }
    let shown = 0;
    for (const [name, lat, lon, pop, capital] of this.places) {
      if (shown >= 60) break;
      if (pop < minPop && !(capital === "primary" && z >= 4)) continue;
      if (!view.contains([lat, lon])) continue;
      const pt = this.map.latLngToContainerPoint([lat, lon]);
      if (!free(pt, name, 6.6)) continue;
      shown++;
      const icon = L.divIcon({ className: `place-label${capital === "primary" ? " capital" : ""}`, html: "", iconSize: null });
      const marker = L.marker([lat, lon], { icon, pane: "labels", interactive: false, keyboard: false });
      marker.addTo(this.placeLayer);
      marker.getElement().append(labelText(name));
    }
  }

  /** A layer of GeoJSON features; properties: label (hover), href (click), cls, category, colour. */
  setLayer(name, features, visible) {
    const old = this.layers.get(name);
    if (old && old.group) old.group.remove();
    const layer = { features: features || [], visible: visible ?? (old ? old.visible : true) };
    layer.group = this.buildLayer(name, layer.features);
    this.layers.set(name, layer);
    if (layer.visible) layer.group.addTo(this.map);
    if (name === "graph") this.renderLegend();
  }

  showLayer(name, visible) {
    const layer = this.layers.get(name);
    if (!layer) {
      this.layers.set(name, { features: [], visible, group: L.layerGroup() });
      return;
    }
    layer.visible = visible;
    if (visible) layer.group.addTo(this.map);
    else layer.group.remove();
  }

  colourOf(category) {
    if (!category) return "#334155";
    if (!this.categories.has(category)) this.categories.set(category, PALETTE[this.categories.size % PALETTE.length]);
    return this.categories.get(category);
  }

  buildLayer(name, features) {
    if (name === "graph") this.categories = new Map();
    const pairLabels = features.filter((f) => f.properties?.cls === "pair").length <= 12; // more would overlap
    return L.geoJSON(
      { type: "FeatureCollection", features },
      {
        pane: name, // one SVG per pane (Leaflet makes it), so areas stay under points
        style: (f) => {
          // points are styled in pointToLayer (colour by category); this would override it
          if (/Point$/.test(f.geometry?.type || "")) return {};
          const p = f.properties || {};
          const cls = p.cls || name;
          return { className: `layer-${name} ${cls}`, ...this.styleOf(cls) };
        },
        pointToLayer: (f, latlng) => {
          const p = f.properties || {};
          const cls = p.cls || name;
          const colour = cls === "graph" ? this.colourOf(p.category) : null;
          return L.circleMarker(latlng, {
            pane: name,
            radius: p.radius || (cls === "graph" ? 6 : 7),
            className: `layer-${name} ${cls} point`,
            ...this.styleOf(cls),
            ...(colour ? { color: "#fff", fillColor: colour, fillOpacity: 1, weight: 1.5 } : {}),
          });
        },
        onEachFeature: (f, layer) => {
          const p = f.properties || {};
          if (p.label) {
            const permanent = p.cls === "pair" && pairLabels && p.distance;
            layer.bindTooltip(permanent ? p.distance : p.label, {
              permanent: Boolean(permanent),
              direction: permanent ? "center" : "top",
              className: permanent ? "pair-label" : "map-label",
              sticky: !permanent && f.geometry.type !== "Point",
            });
            if (permanent) layer.bindPopup(p.label);
          }
          if (p.href) layer.on("click", () => (location.hash = p.href));
        },
      },
    );
  }

  styleOf(cls) {
    switch (cls) {
      case "footprints":
        return { color: "#7c3aed", weight: 1.5, fillColor: "#a78bfa", fillOpacity: 0.12 };
      case "tags":
        return { color: "#fff", weight: 2, fillColor: "#b91c1c", fillOpacity: 1 };
      case "h3":
        return { color: "#0f766e", weight: 1.2, fillColor: "#14b8a6", fillOpacity: 0.15 };
      case "pair":
        return { color: "#1e293b", weight: 2.5, dashArray: "5 3" };
      case "roads":
        return { color: "#92400e", weight: 2, opacity: 0.75 };
      case "filter":
        return { color: "#c2410c", weight: 2, fillColor: "#fb923c", fillOpacity: 0.12 };
      case "draft":
        return { color: "#c2410c", weight: 2, dashArray: "4 3", fill: false };
      default:
        return { color: "#334155", weight: 1.5, fillColor: "#64748b", fillOpacity: 0.3 };
    }
  }

  /** The legend of POI categories under the map (its element: options.legend). */
  renderLegend() {
    const box = this.options.legend;
    if (!box) return;
    box.replaceChildren();
    for (const [category, colour] of this.categories) {
      const item = document.createElement("li");
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = colour;
      item.append(swatch, category);
      item.dataset.category = category;
      box.append(item);
    }
    box.hidden = this.categories.size === 0;
  }

  /** Georeferenced page images: [{url, corners, label}] drawn on their footprints. */
  setRasters(rasters) {
    const old = this.layers.get("rasters");
    if (old && old.group) old.group.remove();
    const group = L.layerGroup(
      rasters.map((r) => new AffineImage(r.url, r.corners, { pane: "rasters", opacity: this.rasterOpacity, alt: r.label, className: "page-raster" })),
    );
    const visible = old ? old.visible : true;
    this.layers.set("rasters", { features: rasters.map((r) => r.feature), visible, group });
    if (visible) group.addTo(this.map);
  }

  setRasterOpacity(value) {
    this.rasterOpacity = value;
    const layer = this.layers.get("rasters");
    if (layer) layer.group.eachLayer((l) => l.setOpacity(value));
  }

  setFilter(filter) {
    this.filter = filter;
    this.drawShape(filter, "filter");
  }

  drawShape(shape, cls) {
    if (this.shapeLayer) this.shapeLayer.remove();
    this.shapeLayer = null;
    const geometry = filterGeometry(shape);
    if (!geometry) return;
    this.shapeLayer = L.geoJSON(geometry, { pane: "filter", interactive: false, style: { className: cls, ...this.styleOf(cls) } });
    this.shapeLayer.addTo(this.map);
  }

  setMode(mode) {
    this.mode = mode;
    this.container.dataset.mode = mode;
    if (mode === "pan") this.map.dragging.enable();
    else this.map.dragging.disable();
  }

  /** Arrows pan by 80 px, + and - zoom one level. */
  key(e) {
    const pan = { ArrowLeft: [-80, 0], ArrowRight: [80, 0], ArrowUp: [0, -80], ArrowDown: [0, 80] }[e.key];
    if (pan) this.map.panBy(pan, { animate: false });
    else if (e.key === "+" || e.key === "=") this.setZoom(this.zoom + 1);
    else if (e.key === "-" || e.key === "_") this.setZoom(this.zoom - 1);
    else return;
    e.preventDefault();
  }

  setZoom(zoom) {
    this.map.setZoom(Math.max(1, Math.min(19, Math.round(zoom))));
  }

  /** Fit the view to [w, s, e, n]; a point gets a town-level zoom. */
  fit(bounds) {
    if (!bounds) return;
    const [w, s, e, n] = bounds;
    if (w === e && s === n) this.map.setView([s, w], 14);
    else this.map.fitBounds([[s, w], [n, e]], { padding: [24, 24], maxZoom: 16 });
  }

  fitLayers(names) {
    const geoms = [];
    for (const name of names) {
      const layer = this.layers.get(name);
      if (layer && layer.visible) for (const f of layer.features) geoms.push(f.geometry);
    }
    this.fit(boundsOf(geoms));
  }

  /** Drawing a radius or a box: pointer events on the container (mouse, pen and touch alike)
   * while the map's own dragging is off. */
  initDrawing() {
    const el = this.container;
    const at = (e) => {
      const ll = this.map.mouseEventToLatLng(e);
      return { lat: ll.lat, lon: ll.lng };
    };
    el.addEventListener("pointerdown", (e) => {
      if (this.mode === "pan" || e.button !== 0) return;
      el.setPointerCapture(e.pointerId);
      this.drag = { start: [e.clientX, e.clientY], at: at(e) };
      e.preventDefault();
    });
    el.addEventListener("pointermove", (e) => {
      if (!this.drag) return;
      this.drawShape(this.shape(this.drag.at, at(e)), "draft");
    });
    el.addEventListener("pointerup", (e) => {
      if (!this.drag) return;
      const moved = Math.hypot(e.clientX - this.drag.start[0], e.clientY - this.drag.start[1]);
      const shape = moved > 4 ? this.shape(this.drag.at, at(e)) : null;
      this.drag = null;
      if (shape) {
        this.filter = shape;
        this.options.onFilter?.(shape);
      }
      this.drawShape(this.filter, "filter");
    });
    el.addEventListener("pointercancel", () => {
      this.drag = null;
      this.drawShape(this.filter, "filter");
    });
  }

  shape(a, b) {
    if (this.mode === "circle") {
      const radius = Math.max(1, Math.round(haversine(a, b)));
      return { lat: round(a.lat), lon: round(a.lon), radius_m: Math.min(radius, 2_000_000) };
    }
    return {
      bbox: [round(Math.min(a.lon, b.lon)), round(Math.min(a.lat, b.lat)), round(Math.max(a.lon, b.lon)), round(Math.max(a.lat, b.lat))],
    };
  }
}

/** A label's text, centred on its point by CSS: Leaflet positions the marker element itself
 * with an inline transform, so the centring is on a child. */
function labelText(name) {
  const span = document.createElement("span");
  span.textContent = name;
  return span;
}

function round(v) {
  return Math.round(v * 1e6) / 1e6;
}
