"""Entity-name clean-up of extraction replies (memrag.index.cleanup, used by memrag.index.extract)."""

from __future__ import annotations

from memrag.index.cleanup import NameCleaner, is_entity_name, name_quality, relation_with, value_type
from memrag.index.extract import validate_extraction
from memrag.index.normalise import entity_key

PASSAGE = ("Fenwold Quarry\nGranite from the Fenwold Quarry paved the quays of Port Alder. By 1900 Port Alder "
           "had about 11,400 inhabitants. The Black Gale at Alder Point is a painting by Wenna Thorold.")


def _names(ex):
    return [m.name for m in ex.entities]


def test_leading_lowercase_articles_go_capitalised_titles_stay():
    c = NameCleaner()
    assert c.name("the Fenwold Quarry") == "Fenwold Quarry"
    assert c.name("a grain merchant") == "grain merchant"
    assert c.name("The Black Gale at Alder Point") == "The Black Gale at Alder Point"
    assert c.counts["leading articles removed"] == 2


def test_the_x_and_x_are_one_node():
    assert entity_key("the Varrow Coast") == entity_key("The Varrow Coast") == entity_key("Varrow Coast")
    assert entity_key("The") == "the"  # a bare article keeps a key
    ex = validate_extraction({"entities": [["The Varrow Coast", "place", 3, "a coast"]],
                              "triples": [["Port Alder", "lies on", "the Varrow Coast"]]})
    assert [m.name for m in ex.entities].count("The Varrow Coast") == 1
    assert "Varrow Coast" not in _names(ex)


def test_an_objects_leading_preposition_moves_into_the_relation():
    ex = validate_extraction({"entities": [], "triples": [
        ["Port Alder", "had about 11,400 inhabitants", "by 1900"],
        ["Skellan Marine Station", "part of", "of the Varrow Coast"]]}, PASSAGE)
    assert ex.triples == [["Port Alder", "had about 11,400 inhabitants by", "1900"],
                          ["Skellan Marine Station", "part of", "Varrow Coast"]]
    assert {"1900", "Varrow Coast"} <= set(_names(ex))
    assert next(m for m in ex.entities if m.name == "1900").type == "date"
    assert ex.cleanup["leading prepositions moved to the relation"] == 2


def test_a_clause_endpoint_keeps_its_triple_but_is_no_entity():
    clause = "that the shoals followed the tides rather than the seasons"
    ex = validate_extraction({"entities": [["Anselm Vell", "person", 4, "tide scholar"]],
                              "triples": [["Anselm Vell", "proposed", clause]]})
    assert ex.triples == [["Anselm Vell", "proposed", clause]]
    assert _names(ex) == ["Anselm Vell"]
    assert ex.cleanup["endpoints kept as values, not entities"] == 1


def test_long_titles_are_names_long_descriptions_are_not():
    assert is_entity_name("The Shoals of the Varrow Coast and Its Harbours Described")
    assert not is_entity_name("brought from a reservoir in the Ennet valley")
    assert not is_entity_name("and studied plants")
    assert is_entity_name("Quail & Sons")


def test_foreign_script_fragment_is_dropped_and_completed_from_the_passage():
    ex = validate_extraction({"entities": [["Fenw旧", "place", 2, "quarry hills"]], "triples": []}, PASSAGE)
    assert _names(ex) == ["Fenwold"]
    assert ex.cleanup["foreign-script characters dropped"] == 1
    # a script the passage itself uses is kept
    ex = validate_extraction({"entities": [["東京", "place", 2, ""]], "triples": []}, "東京 is a city")
    assert _names(ex) == ["東京"]


def test_lone_surrogates_never_reach_a_name_or_description():
    ex = validate_extraction({"entities": [["Northern Rockies\ud83d", "place", 3, "an amalgam\ud83d"]],
                              "triples": []})
    m = ex.entities[0]
    assert (m.name, m.description) == ("Northern Rockies", "an amalgam")
    m.name.encode("utf-8")


def test_description_cut_by_the_cap_ends_at_a_word():
    from memrag import prompts
    cap = prompts.DESCRIPTION_MAX_CHARS
    cut = ("harbour town on the Varrow Coast, home port of the steamers and seat of the mayor since "
           "eighteen")[:cap]
    assert len(cut) == cap and not cut.endswith(" ")
    ex = validate_extraction({"entities": [["Port Alder", "place", 5, cut]], "triples": []})
    d = ex.entities[0].description
    assert d.endswith("…") and cut.startswith(d[:-1]) and d[:-1] == cut.rsplit(" ", 1)[0].rstrip(",")
    short = validate_extraction({"entities": [["Port Alder", "place", 5, "a harbour town"]], "triples": []})
    assert short.entities[0].description == "a harbour town"


def test_relation_with_does_not_double_a_preposition():
    assert relation_with("born in", "in") == "born in"
    assert relation_with("had 11,400 inhabitants", "by") == "had 11,400 inhabitants by"
    assert relation_with("moved", "") == "moved"


def test_value_types():
    assert value_type("1887") == value_type("3 May 1921") == value_type("May 1921") == "date"
    assert value_type("11,400") == "number"
    assert value_type("Hessby") == "other"


def test_name_quality_counts_what_the_issue_measures():
    q = name_quality(["in 1920", "Port Alder", "the Varrow Coast", "Varrow Coast",
                      "The Black Gale at Alder Point", "brought from a reservoir in the Ennet valley"])
    assert q["entity names"] == 6
    assert q["led by an article or preposition %"] == round(100 * 2 / 6, 1)  # 'in 1920', 'the Varrow Coast'
    assert q["over five words %"] == round(100 * 2 / 6, 1)  # titles count here too
    assert q["'the X' / 'X' pairs"] == 1  # 'the Varrow Coast' has its twin; the Black Gale has none


def test_brackets_stay_when_balanced_and_markup_stays_as_written():
    c = NameCleaner()
    assert c.name("Tekeze (river)") == "Tekeze (river)"
    assert c.name("onerror=alert(1)") == "onerror=alert(1)"
    assert c.name("<script>alert(1)</script>") == "<script>alert(1)</script>"
    assert c.name("(Osric Penhallow") == "Osric Penhallow"
    assert c.name('"Port Alder",') == "Port Alder"
