"""`carta eval --dataset FILE[=CATEGORY]`: parsed into a path and a category; a missing
file is a usage error (exit 2) before anything is indexed."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from service.cli.eval import _dataset_spec


def test_dataset_spec_with_and_without_a_category(tmp_path: Path) -> None:
    f = tmp_path / "escolas.geojson"
    f.write_text("{}")
    assert _dataset_spec(str(f)) == (f, None)
    assert _dataset_spec(f"{f}=school") == (f, "school")


def test_missing_dataset_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(typer.Exit) as exc:
        _dataset_spec(f"{tmp_path / 'absent.pbf'}=poi")
    assert exc.value.exit_code == 2
