"""Pure geospatial helpers: coordinates in text, gazetteers, raster georeferencing, H3.

Coordinate order differs at every boundary: h3 and this package's public functions take
(lat, lon); GeoJSON rings are [lon, lat]; Qdrant geo payloads are {"lat", "lon"}."""
