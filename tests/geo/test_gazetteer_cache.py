"""The GeoNames index kept on disk between starts (CARTA_CACHE_DIR): named by code and data
version, read back whole, rebuilt when damaged."""

from __future__ import annotations

from pathlib import Path

from geo import gazetteer as g
from service.carta import load_gazetteer
from service.settings import Settings


def test_the_cache_file_is_named_by_threshold_and_version(tmp_path: Path) -> None:
    path = g._disk_cache(15000, tmp_path)
    assert path.parent == tmp_path and path.name.startswith("geonames-15000-")
    assert g._disk_cache(5000, tmp_path) != path


def test_the_setting_reaches_the_gazetteer(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")
    assert load_gazetteer(settings)._cache_dir == tmp_path / "cache"


def test_an_index_reads_back_as_written(tmp_path: Path) -> None:
    index = g._Index()
    recife = g.Place("geonames:1", "Recife", -8.05, -34.9, "city", "BR", 1_600_000, "geonames")
    index.add(recife, [("Recife", False), ("Récife", True)])
    path = tmp_path / "cache" / "geonames.pickle"
    g._write_cache(path, (index, g._Grid(index.places)))
    read = g._read_cache(path)
    assert read is not None
    again, grid = read
    assert [e.place.name for e in again.get("recife")] == ["Recife"]
    assert [p.id for p in grid.near(-8.0, -34.9)] == ["geonames:1"]


def test_a_damaged_cache_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "geonames.pickle"
    path.write_bytes(b"not a pickle")
    assert g._read_cache(path) is None
    assert g._read_cache(tmp_path / "missing.pickle") is None
