"""Readable graphs (issue 16): colours far apart, entity search with suggestions, safe download
names. (Typed pictures' legends, words and files: tests/test_picture.py, tests/test_export.py.)

Memories come from the real build pipeline driven by a scripted LLM.
"""

from __future__ import annotations

import pytest

from memrag.config import IndexParams
from memrag.index.build import build_memory, run_build
from memrag.index.readers import benchmark_document
from memrag.viz import palette
from memrag.viz.entity_search import UnknownEntity, match_score, resolve_entity, suggest_entities
from scripted import HashEmbedder, ScriptedLLM



def ent(name, typ="person"):
    return {"name": name, "type": typ, "description": f"{name} in the notes", "importance": 3}


@pytest.fixture(scope="module")
def people():
    """Two Penhallows, a coast, and a plant and a material (types outside the fixed list)."""
    docs = [benchmark_document("d1", "Letters", "Osric Penhallow wrote to Corwin Penhallow.", "t"),
            benchmark_document("d2", "Coast", "Corwin Penhallow sailed the Varrow Coast past bitterleaf and tin.",
                               "t")]
    replies = [
        {"entities": [ent("Osric Penhallow"), ent("Corwin Penhallow")],
         "triples": [["Osric Penhallow", "wrote to", "Corwin Penhallow"]]},
        {"entities": [ent("Corwin Penhallow"), ent("the Varrow Coast", "location"), ent("bitterleaf", "plant"),
                      ent("tin", "material")],
         "triples": [["Corwin Penhallow", "sailed", "the Varrow Coast"], ["the Varrow Coast", "grows", "bitterleaf"],
                     ["the Varrow Coast", "yields", "tin"]]},
    ]
    return run_build(build_memory(None, docs, ScriptedLLM({"index.extract": replies}), HashEmbedder(),
                                  IndexParams()))


# ================================================================== palette
def test_no_two_colours_of_a_scheme_look_alike():
    for name, colours in palette.schemes().items():
        for i, a in enumerate(colours):
            for b in colours[i + 1:]:
                assert palette.delta_e(a, b) >= palette.MIN_DELTA_E, (name, a, b)


def test_delta_e_tells_near_identical_colours_from_distinct_ones():
    assert palette.delta_e("#777777", "#787878") < 1 and palette.delta_e("#1a7f37", "#d9730d") > 50


def test_types_outside_the_fixed_list_never_share_a_colour_in_one_graph():
    colours = palette.group_colours(["plant", "material", "person", "place", "organisation"])
    assert colours["plant"] != colours["material"]
    assert palette.delta_e(colours["plant"], colours["material"]) >= palette.MIN_DELTA_E
    assert colours["place"] == palette.TYPE_COLOURS["location"]  # spellings of one type share its colour
    assert colours["organisation"] == palette.TYPE_COLOURS["organization"]
    assert palette.group_colours(["plant"]) == {"plant": palette.group_colour("plant")}  # stable alone
    assert palette.group_colours(["x"], {"x": "red;url(//y)"})["x"].startswith("#")  # not #rrggbb: refused


# ================================================================== entity search
def test_partial_names_suggest_the_entities_they_belong_to(people):
    names = [name for _, name in suggest_entities(people, "Penhallow")]
    assert set(names[:2]) == {"Osric Penhallow", "Corwin Penhallow"}
    assert {n for _, n in suggest_entities(people, "penhalow")[:2]} == set(names[:2])  # a typo
    assert suggest_entities(people, "PENH")[0][1] in {"Osric Penhallow", "Corwin Penhallow"}
    assert suggest_entities(people, "osric")[0] == ("osric penhallow", "Osric Penhallow")
    assert suggest_entities(people, "The Varrow")[0][0] == "varrow coast"  # article and case ignored
    assert suggest_entities(people, "zzzz") == [] and suggest_entities(people, "") == []
    assert len(suggest_entities(people, "Penhallow", n=1)) == 1


def test_match_score_orders_exact_prefix_and_fuzzy():
    assert match_score("osric penhallow", "osric penhallow") == 1.0
    assert 0.85 < match_score("penh", "osric penhallow") < 1.0
    assert match_score("penhalow", "osric penhallow") > 0.6 > match_score("quill", "osric penhallow")


def test_an_unknown_focus_says_what_it_could_mean(people):
    with pytest.raises(UnknownEntity, match="no entity called 'Penhallow'.*did you mean") as caught:
        resolve_entity(people, "Penhallow")
    assert {n for _, n in caught.value.suggestions} >= {"Osric Penhallow", "Corwin Penhallow"}
    assert isinstance(caught.value, ValueError)
    assert resolve_entity(people, "osric  PENHALLOW") == "osric penhallow"  # by key: case and spaces


def test_graph_download_names_are_safe():
    # graphs are named by the one download namer the traces use
    from memrag.textsafe import download_name

    name = download_name("Knowledge graph: Osric/../x", ext="png", day="2026-12-01")
    assert name == "memrag-knowledge-graph-osric-x-2026-12-01.png"
    assert download_name("  ", ext="graphml", day="2026-12-01") == "memrag-2026-12-01.graphml"
