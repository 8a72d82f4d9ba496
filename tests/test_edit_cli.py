"""`python -m memrag edit`: the same edits and their undo from the command line and from the library
give the same memory (compared by content, with the real MiniLM embedder on both sides), bad
requests get a sentence and exit 1 with nothing changed, and the shipped sample is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edit_memory import build_two, content, hash_embedder
from memrag.cli.main import main
from memrag.embed import get_embedder
from memrag.index import edits, store, versions
from memrag.index.edits import Edit

REPO = Path(__file__).parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memrag", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("built") / "mem"
    build_two(path, get_embedder())
    return path


def test_the_cli_and_the_library_make_the_same_memory_edit_by_edit_and_undo_alike(built, tmp_path):
    by_cli, by_lib = tmp_path / "cli", tmp_path / "lib"
    shutil.copytree(built, by_cli)
    shutil.copytree(built, by_lib)
    steps = [
        (["merge", "Varrow Coast", "Varrow Coast Lines"], Edit("merge", {"entity": "Varrow Coast",
                                                                         "into": "Varrow Coast Lines"})),
        (["rename", "port alder", "Port Aldermoor"], Edit("rename", {"entity": "port alder", "name": "Port Aldermoor"})),
        (["add-triple", "Ada Brennick", "married", "Corwin Penhallow", "--passage", "ada"],
         Edit("add-triple", {"head": "Ada Brennick", "relation": "married", "tail": "Corwin Penhallow", "passage": 0})),
        (["remove-triple", "Port Aldermoor", "lies on", "Vell"], Edit("remove-triple", {"triple": 3})),
        (["unlink-coref", "Brennick", "Ada Brennick"], Edit("unlink-coref", {"entity": "Brennick",
                                                                             "other": "Ada Brennick"})),
        (["split", "Varrow Coast Lines"], Edit("split", {"entity": "Varrow Coast Lines"})),
    ]
    for argv, edit in steps:
        done = cli("edit", "--memory", str(by_cli), *argv, "--json")
        assert done.returncode == 0, (argv, done.stderr)
        said = json.loads(done.stdout.splitlines()[-1])
        lib = edits.edit_memory(by_lib, edit, get_embedder)
        assert (said["edit"], said["args"], said["version"], said["text"]) == (edit.kind, edit.args, lib.version,
                                                                             lib.text)
        assert content(store.load(by_cli)) == content(store.load(by_lib)), argv
    assert store.load(by_cli).entity("port aldermoor") is not None  # the edits did happen
    undone = cli("index", "--memory", str(by_cli), "--undo")
    assert undone.returncode == 0 and "undid the last change (split" in undone.stdout, undone.stderr
    store.undo(by_lib)
    assert content(store.load(by_cli)) == content(store.load(by_lib))
    logged = [(r.entry.kind, r.entry.args, r.entry.version) for r in versions.history(by_cli)]
    assert logged == [(r.entry.kind, r.entry.args, r.entry.version) for r in versions.history(by_lib)]
    assert [k for k, _, _ in logged] == ["build", "merge", "rename", "add-triple", "remove-triple", "unlink-coref",
                                         "split", "undo"]


@pytest.fixture
def mem(tmp_path, monkeypatch) -> Path:
    """A memory of the hash test embedder, edited in this process (no model to load)."""
    path = tmp_path / "mem"
    build_two(path)
    monkeypatch.setattr("memrag.cli.edit._embedder", hash_embedder)
    return path


@pytest.mark.parametrize("argv, said", [
    (["merge", "Brenick", "Vell"], "not an entity of this memory: 'Brenick' (did you mean 'Brennick'?)"),
    (["merge", "Vell", "vell"], "'Vell' and 'vell' name one entity ('Vell'): a merge needs two different entities"),
    (["add-triple", "Vell", "feeds", "Port Alder", "--passage", "9"], "no passage '9'"),
    (["add-triple", "Vell", "feeds", "Port Alder", "--passage", "mil"], "no passage 'mil'"),
    (["remove-triple", "Port Alder", "lies in", "Vell"], "no triple reads Port Alder → lies in → Vell"),
    (["remove-triple", "12"], "no triple 12"),
    (["remove-triple", "Vell", "x"], "remove-triple takes a triple's id, or its HEAD RELATION TAIL"),
    (["split", "Vell"], "'Vell' is not the result of a merge on record: nothing to split"),
    (["rename", "Vell", "Brennick"], "merge 'Vell' into it instead"),
])
def test_a_bad_edit_exits_1_with_a_sentence_and_changes_nothing(mem, capsys, argv, said):
    vdir = store.current_version_dir(mem)
    assert main(["edit", "--memory", str(mem), *argv]) == 1
    err = capsys.readouterr().err
    assert said in err and "Nothing was changed" in err and "Traceback" not in err, err
    assert store.current_version_dir(mem) == vdir


def test_remove_triple_by_words_names_the_instances_when_they_are_several(mem, capsys):
    assert main(["edit", "--memory", str(mem), "add-triple", "Port Alder", "lies on", "Vell", "--passage", "0"]) == 0
    capsys.readouterr()
    assert main(["edit", "--memory", str(mem), "remove-triple", "port alder", "LIES ON", "vell"]) == 1
    assert "2 triples read port alder → LIES ON → vell: 3 (passage 1), 5 (passage 0)" in capsys.readouterr().err
    assert main(["edit", "--memory", str(mem), "remove-triple", "Port Alder", "lies on", "Vell", "--passage", "0"]) == 0
    assert "removed triple 5" in capsys.readouterr().out


def test_show_and_log_print_what_a_person_needs_to_edit(mem, capsys):
    assert main(["edit", "--memory", str(mem), "merge", "Ada Brennick", "Brennick"]) == 0
    out = capsys.readouterr().out
    assert "merged 'Ada Brennick' into 'Brennick'" in out and "--undo" in out
    assert main(["edit", "--memory", str(mem), "show", "brennick", "--json"]) == 0
    out = capsys.readouterr().out
    assert "triple 0 (passage 0): Ada Brennick → born in → Port Alder" in out
    assert "merged into it: Ada Brennick" in out and json.loads(out.splitlines()[-1])["merged"] == ["Ada Brennick"]
    assert main(["edit", "--memory", str(mem), "log"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "\tbuild\tadded ada, mill\t-> v000001 (kept)" in lines[0]
    assert "\tmerge\tmerged 'Ada Brennick' into 'Brennick'" in lines[1] and "(live); before it: v000001 (kept)" in lines[1]


def test_the_shipped_sample_memory_is_refused_and_left_as_it_was(capsys):
    sample = REPO / "sample_corpus" / "memory"
    names, vdir = sorted(p.name for p in sample.iterdir()), store.current_version_dir(sample)
    assert main(["edit", "--memory", str(REPO / "sample_corpus" / ".." / "sample_corpus" / "memory"), "rename", "Port Alder", "Alder"]) == 1
    err = capsys.readouterr().err
    assert "The sample memory ships with memrag" in err and "Edits go to a copy" in err and "Nothing was changed" in err
    assert sorted(p.name for p in sample.iterdir()) == names and store.current_version_dir(sample) == vdir
    assert main(["edit", "--memory", str(sample), "log"]) == 0  # reading it is fine
