"""What ``gangkit run --out DIR`` and ``gangkit export --out FILE`` write: new files, never through a link.

A file already there is refused unless ``--force`` (one line naming the files, in ``gangkit
export``'s words, exit 2, before anything runs); a symbolic link, even a dangling one, is refused
always; an empty ``--out`` is an error, not standard output. Each row: the command, what is in the
folder before, and what must be there after.
"""

from __future__ import annotations

import pytest

from conftest import case, run_cli

TABLES = ["events.csv", "jobs.csv", "pods.csv", "timeline.csv"]
KEPT = "kept\n"


def _files(folder, names):
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text(KEPT)


def _link(folder, name):
    folder.mkdir(exist_ok=True)
    (folder / name).symlink_to(folder.parent / "elsewhere" / name)


RUN = [
    case("run into a new folder writes the four tables", [], lambda d: None, 0, "", TABLES),
    case("run into a folder holding its tables is refused, naming them", [], lambda d: _files(d, TABLES), 2,
         "error: Files {d}/jobs.csv, {d}/pods.csv, {d}/events.csv, {d}/timeline.csv: --out: exist; expected new "
         "files (or --force to replace them)", []),
    case("run into a folder holding one of its tables is refused, naming it", [], lambda d: _files(d, ["pods.csv"]), 2,
         "error: File {d}/pods.csv: --out: exists; expected a new file (or --force to replace it)", []),
    case("run --force replaces the tables", ["--force"], lambda d: _files(d, TABLES), 0, "", TABLES),
    case("run --force next to other files leaves them", ["--force"], lambda d: _files(d, ["notes.txt"]), 0, "",
         TABLES),
    case("run --force into a dangling link is refused", ["--force"], lambda d: _link(d, "jobs.csv"), 2,
         "error: File {d}/jobs.csv (to {e}/jobs.csv): --out: is a symbolic link; expected a regular file", []),
    case("run --compare into a folder holding compare.csv is refused", ["--compare", "pod,gang"],
         lambda d: _files(d, ["compare.csv"]), 2,
         "error: File {d}/compare.csv: --out: exists; expected a new file (or --force to replace it)", []),
    case("run --compare --force replaces compare.csv", ["--compare", "pod,gang", "--force"],
         lambda d: _files(d, ["compare.csv"]), 0, "", ["compare.csv"]),
]


@pytest.mark.parametrize("extra, before, status, says, written", RUN)
def test_run_out_writes_new_tables_or_refuses_in_one_line(tmp_path, capsys, extra, before, status, says, written):
    folder = tmp_path / "out"
    before(folder)
    kept = {p.name: p.read_text() for p in folder.iterdir() if not p.is_symlink()} if folder.exists() else {}
    got, out, err = run_cli(["run", "three-workers", "--out", str(folder), *extra], capsys)
    assert got == status and "Traceback" not in err, err
    if status:
        assert out == "" and len(err.splitlines()) == 1, err
        assert err.startswith(says.format(d=folder, e=tmp_path / "elsewhere")), err
        assert not (tmp_path / "elsewhere").exists()  # nothing written through a link
    for name in written:
        assert (folder / name).read_text() != KEPT and (folder / name).read_text().count("\n") > 1
    for name, text in kept.items():
        if name not in written:
            assert (folder / name).read_text() == text  # a refusal leaves every file as it was


EXPORT = [
    case("export to a new file writes it", [], lambda f: None, 0, "gangkit export: wrote {f}"),
    case("export to an existing file is refused", [], lambda f: f.write_text(KEPT), 2,
         "error: File {f}: --out: exists; expected a new file (or --force to replace it)"),
    case("export --force replaces an existing file", ["--force"], lambda f: f.write_text(KEPT), 0,
         "gangkit export: wrote {f}"),
    case("export to a dangling link is refused", [], lambda f: f.symlink_to(f.parent / "elsewhere.yaml"), 2,
         "error: File {f} (to {e}): --out: is a symbolic link; expected a regular file"),
    case("export --force to a dangling link is refused", ["--force"],
         lambda f: f.symlink_to(f.parent / "elsewhere.yaml"), 2,
         "error: File {f} (to {e}): --out: is a symbolic link; expected a regular file"),
    case("export --force to a link to a file leaves that file", ["--force"],
         lambda f: ((f.parent / "elsewhere.yaml").write_text(KEPT), f.symlink_to(f.parent / "elsewhere.yaml")), 2,
         "error: File {f} (to {e}): --out: is a symbolic link; expected a regular file"),
]


@pytest.mark.parametrize("extra, before, status, says", EXPORT)
def test_export_out_writes_a_new_file_or_refuses_in_one_line(tmp_path, capsys, extra, before, status, says):
    path, elsewhere = tmp_path / "out.yaml", tmp_path / "elsewhere.yaml"
    before(path)
    got, out, err = run_cli(["export", "three-workers", "--to", "gang", "--out", str(path), *extra], capsys)
    assert got == status and out == "" and "Traceback" not in err, err
    assert err.startswith(says.format(f=path, e=elsewhere)) and len(err.splitlines()) == 1, err
    if status:
        assert not elsewhere.exists() or elsewhere.read_text() == KEPT  # nothing written through a link
        assert path.is_symlink() or path.read_text() == KEPT
    else:
        assert "\napiVersion: v1\nkind: Node\n" in path.read_text() and not path.is_symlink()


@pytest.mark.parametrize("argv, says", [
    case("run --out ''", ["run", "three-workers", "--out", ""],
         "error: --out '': expected a folder name for the CSV tables, got an empty one"),
    case("run --compare --out ''", ["run", "three-workers", "--compare", "pod,gang", "--out", ""],
         "error: --out '': expected a folder name for the CSV tables, got an empty one"),
    case("export --out ''", ["export", "three-workers", "--to", "gang", "--out", ""],
         "error: --out '': expected a file name for the YAML, got an empty one"),
])
def test_an_empty_out_is_an_error_not_standard_output(capsys, argv, says):
    got, out, err = run_cli(argv, capsys)
    assert got == 2 and out == "" and err.startswith(says) and len(err.splitlines()) == 1, err
