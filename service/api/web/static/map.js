// The map panel: GeoJSON layers drawn as SVG over a plain background with a web-mercator
// projection (works offline); raster tiles underneath only when a tile URL is configured.
// Tools: pan, draw a circle (radius filter) or a box (bbox filter).

const TILE = 256;
const SVG = "http://www.w3.org/2000/svg";
const MAX_LAT = 85.05112878;
const EARTH_R = 6371008.8;
const RAD = Math.PI / 180;

const clampLat = (lat) => Math.max(-MAX_LAT, Math.min(MAX_LAT, lat));
const worldSize = (z) => TILE * 2 ** z;
export const lonToX = (lon, z) => ((lon + 180) / 360) * worldSize(z);
export function latToY(lat, z) {
  const s = Math.sin(clampLat(lat) * RAD);
  return (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * worldSize(z);
}
export const xToLon = (x, z) => (x / worldSize(z)) * 360 - 180;
export function yToLat(y, z) {
  const n = Math.PI - (2 * Math.PI * y) / worldSize(z);
  return Math.atan(Math.sinh(n)) / RAD;
}

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

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function eachCoord(geometry, fn) {
  if (!geometry) return;
  const walk = (c) => (typeof c[0] === "number" ? fn(c) : c.forEach(walk));
  if (geometry.type === "GeometryCollection") geometry.geometries.forEach((g) => eachCoord(g, fn));
  else walk(geometry.coordinates);
}

export function boundsOf(geometries) {
  let b = null;
  for (const g of geometries)
    eachCoord(g, ([lon, lat]) => {
      if (!b) b = [lon, lat, lon, lat];
      else b = [Math.min(b[0], lon), Math.min(b[1], lat), Math.max(b[2], lon), Math.max(b[3], lat)];
    });
  return b;
}

function niceStep(degrees) {
  for (const s of [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 45, 90])
    if (s >= degrees) return s;
  return 90;
}

export class GeoMap {
  /** el: the container; options: {tileUrl, attribution, onFilter(filter), label}. */
  constructor(container, options = {}) {
    this.container = container;
    this.options = options;
    this.center = { lon: -40, lat: -12 };
    this.zoom = 3;
    this.mode = "pan";
    this.layers = new Map(); // name -> {features, visible}
    this.filter = null;
    this.draft = null;
    this.svg = el("svg", {
      class: "map-svg",
      role: "application",
      tabindex: "0",
      "aria-label": options.label || "Map",
      "aria-roledescription": "map",
    });
    container.append(this.svg);
    this.svg.addEventListener("pointerdown", (e) => this.down(e));
    this.svg.addEventListener("pointermove", (e) => this.move(e));
    this.svg.addEventListener("pointerup", (e) => this.up(e));
    this.svg.addEventListener("pointercancel", () => (this.drag = null));
    this.svg.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
    this.svg.addEventListener("keydown", (e) => this.key(e));
    new ResizeObserver(() => this.render()).observe(container);
  }

  size() {
    return { w: this.container.clientWidth || 300, h: this.container.clientHeight || 300 };
  }

  project(lon, lat) {
    const { w, h } = this.size();
    return [
      lonToX(lon, this.zoom) - lonToX(this.center.lon, this.zoom) + w / 2,
      latToY(lat, this.zoom) - latToY(this.center.lat, this.zoom) + h / 2,
    ];
  }

  unproject(px, py) {
    const { w, h } = this.size();
    const x = lonToX(this.center.lon, this.zoom) + px - w / 2;
    const y = latToY(this.center.lat, this.zoom) + py - h / 2;
    return { lon: xToLon(x, this.zoom), lat: yToLat(y, this.zoom) };
  }

  setLayer(name, features, visible) {
    const old = this.layers.get(name);
    this.layers.set(name, { features: features || [], visible: visible ?? (old ? old.visible : true) });
    this.render();
  }

  showLayer(name, visible) {
    const layer = this.layers.get(name) || { features: [] };
    this.layers.set(name, { ...layer, visible });
    this.render();
  }

  setFilter(filter) {
    this.filter = filter;
    this.render();
  }

  setMode(mode) {
    this.mode = mode;
    this.svg.dataset.mode = mode;
  }

  setZoom(zoom) {
    this.zoom = Math.max(1, Math.min(19, Math.round(zoom)));
    this.render();
  }

  /** Fit the view to [w, s, e, n]; a point gets a town-level zoom. */
  fit(bounds) {
    if (!bounds) return;
    const [w, s, e, n] = bounds;
    const { w: width, h: height } = this.size();
    this.center = { lon: (w + e) / 2, lat: yToLat((latToY(n, 0) + latToY(s, 0)) / 2, 0) };
    let zoom = 14;
    while (zoom > 1) {
      const dx = lonToX(e, zoom) - lonToX(w, zoom);
      const dy = latToY(s, zoom) - latToY(n, zoom);
      if (dx <= width * 0.8 && dy <= height * 0.8) break;
      zoom--;
    }
    this.zoom = zoom;
    this.render();
  }

  fitLayers(names) {
    const geoms = [];
    for (const name of names) {
      const layer = this.layers.get(name);
      if (layer && layer.visible) for (const f of layer.features) geoms.push(f.geometry);
    }
    this.fit(boundsOf(geoms));
  }

  point(e) {
    const r = this.svg.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  down(e) {
    if (e.button !== 0) return;
    this.svg.setPointerCapture(e.pointerId);
    const p = this.point(e);
    this.drag = { start: p, last: p, at: this.unproject(...p) };
  }

  move(e) {
    if (!this.drag) return;
    const p = this.point(e);
    if (this.mode === "pan") {
      const [dx, dy] = [p[0] - this.drag.last[0], p[1] - this.drag.last[1]];
      const { w, h } = this.size();
      this.center = this.unproject(w / 2 - dx, h / 2 - dy);
      this.drag.last = p;
    } else {
      this.draft = this.shape(this.drag.at, this.unproject(...p));
    }
    this.render();
  }

  up(e) {
    if (!this.drag) return;
    const p = this.point(e);
    const moved = Math.hypot(p[0] - this.drag.start[0], p[1] - this.drag.start[1]);
    const shape = this.mode !== "pan" && moved > 4 ? this.shape(this.drag.at, this.unproject(...p)) : null;
    this.drag = null;
    this.draft = null;
    if (shape) {
      this.filter = shape;
      this.options.onFilter?.(shape);
    }
    this.render();
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

  wheel(e) {
    e.preventDefault();
    const p = this.point(e);
    const at = this.unproject(...p);
    this.zoom = Math.max(1, Math.min(19, this.zoom + (e.deltaY < 0 ? 1 : -1)));
    // keep the point under the cursor where it was
    const [nx, ny] = this.project(at.lon, at.lat);
    const { w, h } = this.size();
    this.center = this.unproject(w / 2 + nx - p[0], h / 2 + ny - p[1]);
    this.render();
  }

  key(e) {
    const { w, h } = this.size();
    const pan = { ArrowLeft: [-64, 0], ArrowRight: [64, 0], ArrowUp: [0, -64], ArrowDown: [0, 64] }[e.key];
    if (pan) this.center = this.unproject(w / 2 + pan[0], h / 2 + pan[1]);
    else if (e.key === "+" || e.key === "=") this.zoom = Math.min(19, this.zoom + 1);
    else if (e.key === "-") this.zoom = Math.max(1, this.zoom - 1);
    else return;
    e.preventDefault();
    this.render();
  }

  pathOf(geometry) {
    const ring = (coords) => coords.map(([lon, lat], i) => `${i ? "L" : "M"}${this.project(lon, lat).map((v) => v.toFixed(1)).join(" ")}`).join("") ;
    switch (geometry.type) {
      case "LineString":
        return ring(geometry.coordinates);
      case "MultiLineString":
        return geometry.coordinates.map(ring).join("");
      case "Polygon":
        return geometry.coordinates.map((r) => ring(r) + "Z").join("");
      case "MultiPolygon":
        return geometry.coordinates.map((p) => p.map((r) => ring(r) + "Z").join("")).join("");
      default:
        return "";
    }
  }

  drawGeometry(group, geometry, props, cls) {
    if (!geometry) return;
    if (geometry.type === "GeometryCollection") {
      geometry.geometries.forEach((g) => this.drawGeometry(group, g, props, cls));
      return;
    }
    const points = geometry.type === "Point" ? [geometry.coordinates] : geometry.type === "MultiPoint" ? geometry.coordinates : null;
    const parent = props.href ? group.appendChild(el("a", { href: props.href, "aria-label": props.label || "" })) : group;
    if (points) {
      for (const [lon, lat] of points) {
        const [x, y] = this.project(lon, lat);
        const dot = parent.appendChild(el("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: props.radius || 6, class: `${cls} point` }));
        if (props.label) dot.appendChild(el("title", {}, props.label));
      }
    } else {
      const path = parent.appendChild(el("path", { d: this.pathOf(geometry), class: cls }));
      if (props.label) path.appendChild(el("title", {}, props.label));
    }
  }

  render() {
    const { w, h } = this.size();
    const svg = this.svg;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.replaceChildren(el("rect", { x: 0, y: 0, width: w, height: h, class: "map-bg" }));
    if (this.options.tileUrl) this.drawTiles(svg, w, h);
    else this.drawGraticule(svg, w, h);
    const order = ["footprints", "h3", "graph", "tags"]; // areas under lines under points
    const rank = (name) => (order.includes(name) ? order.indexOf(name) : order.length);
    for (const [name, layer] of [...this.layers].sort((a, b) => rank(a[0]) - rank(b[0]))) {
      if (!layer.visible) continue;
      const group = svg.appendChild(el("g", { class: `layer layer-${name}`, "data-layer": name }));
      for (const f of layer.features) this.drawGeometry(group, f.geometry, f.properties || {}, f.properties?.cls || name);
    }
    const drawn = this.draft || this.filter;
    if (drawn) {
      const group = svg.appendChild(el("g", { class: "layer layer-filter" }));
      this.drawGeometry(group, filterGeometry(drawn), {}, this.draft ? "draft" : "filter");
    }
    const scale = this.scaleBar(w, h);
    if (scale) svg.appendChild(scale);
    svg.dataset.zoom = this.zoom;
  }

  drawGraticule(svg, w, h) {
    const nw = this.unproject(0, 0);
    const se = this.unproject(w, h);
    const step = niceStep((se.lon - nw.lon) / 6);
    const group = svg.appendChild(el("g", { class: "graticule", "aria-hidden": "true" }));
    const digits = step < 0.01 ? 3 : step < 0.1 ? 2 : step < 1 ? 1 : 0;
    for (let lon = Math.ceil(nw.lon / step) * step; lon <= se.lon; lon += step) {
      const [x] = this.project(lon, 0);
      group.appendChild(el("line", { x1: x, y1: 0, x2: x, y2: h }));
      group.appendChild(el("text", { x: x + 3, y: h - 6 }, `${lon.toFixed(digits)}°`));
    }
    for (let lat = Math.ceil(se.lat / step) * step; lat <= nw.lat; lat += step) {
      const [, y] = this.project(0, lat);
      group.appendChild(el("line", { x1: 0, y1: y, x2: w, y2: y }));
      group.appendChild(el("text", { x: 4, y: y - 3 }, `${lat.toFixed(digits)}°`));
    }
  }

  drawTiles(svg, w, h) {
    const z = this.zoom;
    const n = 2 ** z;
    const cx = lonToX(this.center.lon, z) - w / 2;
    const cy = latToY(this.center.lat, z) - h / 2;
    const group = svg.appendChild(el("g", { class: "tiles", "aria-hidden": "true" }));
    for (let tx = Math.floor(cx / TILE); tx * TILE < cx + w; tx++)
      for (let ty = Math.max(0, Math.floor(cy / TILE)); ty * TILE < cy + h && ty < n; ty++) {
        const x = ((tx % n) + n) % n;
        const href = this.options.tileUrl.replace("{z}", z).replace("{x}", x).replace("{y}", ty);
        group.appendChild(el("image", { href, x: tx * TILE - cx, y: ty * TILE - cy, width: TILE, height: TILE }));
      }
  }

  scaleBar(w, h) {
    const a = this.unproject(w / 2 - 50, h / 2);
    const b = this.unproject(w / 2 + 50, h / 2);
    const metres = haversine(a, b); // per 100 px
    const nice = [1, 2, 5].flatMap((m) => [1, 10, 100, 1000, 10000, 100000, 1000000].map((p) => m * p)).sort((x, y) => x - y);
    const len = nice.filter((v) => v <= metres * 1.5).pop();
    if (!len) return null;
    const px = (len / metres) * 100;
    const g = el("g", { class: "scale", "aria-hidden": "true" });
    g.appendChild(el("rect", { x: w - px - 16, y: 6, width: px + 8, height: 22, class: "scale-bg" }));
    g.appendChild(el("line", { x1: w - px - 12, y1: 23, x2: w - 12, y2: 23 }));
    g.appendChild(el("text", { x: w - px - 12, y: 19 }, len >= 1000 ? `${len / 1000} km` : `${len} m`));
    return g;
  }
}

function round(v) {
  return Math.round(v * 1e6) / 1e6;
}
