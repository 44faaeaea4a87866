"""Pure geospatial helpers: coordinates in text, gazetteers, raster georeferencing, H3
tokens, great-circle distance (distance.py), accent folding (folding.py) and GeoJSON
shapes with the H3 cell <-> ring conversions (shapes.py).

Coordinate order differs at every boundary: h3 and this package's public functions take
(lat, lon); GeoJSON rings are [lon, lat]; Qdrant geo payloads are {"lat", "lon"}."""
