"""The official CL-SciSumm 2018 Task 1 CSV scoring (quirks included): the readers' cell parsing
(scholarly_nlp.readers.clscisumm_cells), the metric's counting, and the Task 1 CSV writer."""

from __future__ import annotations

import csv
import warnings

import pytest

from scholarly_nlp.metrics.clscisumm import (
    Counts,
    clscisumm_task1_official,
    clscisumm_task1_per_citance,
    official_task1_counts,
    task1a_counts,
)
from scholarly_nlp.readers.clscisumm import read_task1_csv
from scholarly_nlp.readers.clscisumm_cells import (
    citance_task1_maps,
    official_facets,
    official_reference_offsets,
    official_reference_text_ok,
    official_task1_maps,
)
from scholarly_nlp.readers.clscisumm_csv import (
    TASK1_CSV_HEADER,
    format_facets,
    format_reference_offset,
    read_task1_rows,
    reference_text_markup,
    task1_row,
    write_task1_csv,
)


def row(number, citing, sids, facet="Method_Citation", text=None, rp="C00-2123"):
    """A raw CSV row (column -> cell) as csv.reader gives it."""
    if text is None:
        text = "".join(f'<S sid ="{s}" ssid = "1">Sentence {s}.</S>' for s in sids) if sids else "NA"
    offsets = "[" + ",".join(f"'{s}'" for s in sids) + "]" if sids else "NA"
    return {
        "Citance Number": str(number), "Reference Article": rp, "Citing Article": citing,
        "Citation Marker Offset": "0", "Citation Marker": "Smith, 2000", "Citation Offset": "0",
        "Citation Text": f"citance {number}", "Citation Text Clean": f"citance {number}",
        "Reference Offset": offsets, "Reference Text": text, "Discourse Facet": facet,
    }


def counts_of(system_rows, gold_rows):
    """The metric's official counts of two CSVs' rows, read as the script reads them."""
    return official_task1_counts(official_task1_maps(system_rows), official_task1_maps(gold_rows))


def official_of(pairs):
    """The metric's official scores of (system rows, gold rows) pairs."""
    return clscisumm_task1_official([(official_task1_maps(s), official_task1_maps(g)) for s, g in pairs])


def per_citance_of(pairs):
    """The metric's per-citance scores of (system rows, gold rows) pairs."""
    return clscisumm_task1_per_citance([(citance_task1_maps(s), citance_task1_maps(g)) for s, g in pairs])


# --------------------------------------------------------------------------- cell parsing


@pytest.mark.parametrize("cell, expected", [
    ("['17', '18']", ["17", "18"]),
    ("['17','18']", ["17", "18"]),
    (" '11'", ["11"]),
    ("'7','24'", ["7", "24"]),
    ("17", ["17"]),
    ("['017']", ["017"]),        # no normalisation: '017' is not '17'
    ("['5', '5']", ["5", "5"]),  # repeats kept
    ("", [""]),
    ("[]", [""]),
])
def test_official_reference_offsets(cell, expected):
    assert official_reference_offsets(cell) == expected


@pytest.mark.parametrize("cell, expected", [
    ("Method_Citation", ["method_citation"]),
    ("Method Citation", ["method_citation"]),
    ("Method citation", ["method_citation"]),
    ("['Method_Citation','Results_Citation']", ["method_citation", "results_citation"]),
    ("['Method_Citation', 'Results_Citation']", ["method_citation", "results_citation"]),
    ("Method_Citation,Hypothesis_Citation", ["method_citation", "hypothesis_citation"]),
    ("Result_Citation", ["result_citation"]),
    ("", []),
    ("NA", ["na"]),
])
def test_official_facets(cell, expected):
    assert official_facets(cell) == expected


@pytest.mark.parametrize("cell, ok", [
    ('<S sid ="17" ssid = "3">Text.</S>', True),
    (' <S sid=""11"" ssid=""1"">Text</S>'.replace('""', '"'), True),
    ('<S sid ="1" ssid = "1">A &amp; B</S><S sid ="2" ssid = "2">C &apos;D&apos; &#8212;</S>', True),
    ('<S sid ="1">A & B &lt; C</S>', True),
    ("NA", False),
    ("", False),
    ("plain text without markup", False),
    ('<S sid ="1"></S>', False),                       # empty <S>: the script raises, row dropped
    ('<S sid ="1">x</S><S sid ="2"></S>', False),
    ('<P><S sid ="1">nested</S></P>', False),          # no <S> child of the root
])
def test_official_reference_text_ok(cell, ok):
    assert official_reference_text_ok(cell) is ok


def test_reference_text_ok_agrees_with_beautifulsoup():
    """Where BeautifulSoup is installed, check the lxml emulation against the script's own parsing."""
    bs4 = pytest.importorskip("bs4")
    import xml.etree.ElementTree as ET

    def script_ok(cell):
        if cell == "NA":
            return False
        line = ("<root>" + cell + "</root>").replace("&amp;", "&").replace("&", "&amp;")
        root = ET.fromstring(str(bs4.BeautifulSoup(line, "xml")))
        children = [c for c in root.findall("./*") if c.tag == "S"]
        return bool(children) and all(c.text for c in children)

    cells = [
        '<S sid ="17" ssid = "3">Text.</S>', '<S sid ="1">A & B &lt; C</S>', "plain", '<S sid ="1"></S>',
        '<S sid="1">a</S> <S sid="2">b <i>c</i></S>', '<S sid ="1">unclosed', '<S sid="1"><b>x</b> y</S>',
        reference_text_markup([("5", "x < y & z > w", "2"), ("6", "quote \" and ' apostrophe")]),
    ]
    for cell in cells:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert official_reference_text_ok(cell) == script_ok(cell), cell


# --------------------------------------------------------------------------- the official keying


def test_last_row_of_a_citing_paper_wins():
    gold = [row(1, "P01", ["5"]), row(2, "P01", ["7"])]
    # Citance 1 right, citance 2 wrong: only the last row (citance 2) counts officially.
    system = [row(1, "P01", ["5"]), row(2, "P01", ["9"])]
    a, b = counts_of(system, gold)
    assert a == Counts(0, 1, 1)
    assert b == Counts(0, 0, 1)  # not comparable: the gold facet is a FN, the system's is ignored
    # The same answers the other way round: the last row is right, so everything is.
    system = [row(1, "P01", ["9"]), row(2, "P01", ["7"])]
    a, b = counts_of(system, gold)
    assert a == Counts(1, 0, 0) and b == Counts(1, 0, 0)
    # Keyed per citance, both answers count.
    per = per_citance_of([(system, gold)])
    assert (per["task1a_tp"], per["task1a_fp"], per["task1a_fn"]) == (1, 1, 1)


def test_maps_key_by_citing_paper_and_forced_zero_offset():
    rows = [row(1, "P01.xml", ["5"]), row(2, "P02", ["6"], facet="Aim_Citation"), row(3, "P01", ["8", "9"])]
    rows[0]["Reference Article"] = "C00-2123.xml"
    rows[0]["Citation Marker Offset"] = "['41']"
    sentences, facets = official_task1_maps(rows)
    assert sentences == {("C00-2123", "P01", "0"): ["8", "9"], ("C00-2123", "P02", "0"): ["6"]}
    assert facets == {("C00-2123", "P01", "0"): ["method_citation"], ("C00-2123", "P02", "0"): ["aim_citation"]}


def test_na_rows_are_skipped():
    gold = [row(1, "P01", ["5"]), row(2, "P01", [])]   # the last gold row is NA: row 1 stays
    system = [row(1, "P01", ["5"]), row(2, "P01", [])]
    assert counts_of(system, gold)[0] == Counts(1, 0, 0)
    # A system that answers only with NA rows is absent: every gold id is a FN.
    system = [row(1, "P01", []), row(2, "P01", [])]
    assert counts_of(system, gold) == (Counts(0, 0, 1), Counts(0, 0, 1))
    # "NA" is matched exactly (an "NA " cell is not skipped, but it does not parse either).
    assert official_task1_maps([row(1, "P01", ["5"], text="NA ")]) == ({}, {("C00-2123", "P01", "0"): []})


def test_unparsable_reference_text_keeps_the_earlier_answer():
    gold = [row(1, "P01", ["5"])]
    system = [row(1, "P01", ["5"]), row(2, "P01", ["9"], text="no markup here")]
    assert counts_of(system, gold)[0] == Counts(1, 0, 0)


def test_comparable_rule():
    gold = [row(1, "P01", ["5", "6"], facet="['Method_Citation','Results_Citation']"),
            row(2, "P02", ["7"], facet="Aim_Citation")]
    system = [
        row(1, "P01", ["6", "8"], facet="['Method_Citation', 'Implication_Citation']"),  # comparable
        row(2, "P02", ["9"], facet="Aim_Citation"),                                    # not comparable
        row(3, "P03", ["1"], facet="Hypothesis_Citation"),                             # not in gold
    ]
    a, b = counts_of(system, gold)
    assert a == Counts(tp=1, fp=3, fn=2)
    # P01: method TP, results FN, implication FP. P02: aim FN (system facet ignored). P03: FP.
    assert b == Counts(tp=1, fp=2, fn=2)


def test_system_facet_of_an_unfilled_gold_entry_is_not_a_false_positive():
    gold = [row(1, "P01", ["5"], text="broken, no sentence")]   # entry created, never filled
    system = [row(1, "P01", ["5"], facet="Aim_Citation")]
    assert counts_of(system, gold) == (Counts(0, 1, 0), Counts(0, 0, 0))
    assert counts_of(system, []) == (Counts(0, 1, 0), Counts(0, 1, 0))


def test_facet_strings_compared_as_the_script_does():
    gold = [row(1, "P01", ["5"], facet="Method Citation"), row(1, "P02", ["5"], facet="Result_Citation")]
    system = [row(1, "P01", ["5"], facet="Method_Citation"), row(1, "P02", ["5"], facet="Results_Citation")]
    assert counts_of(system, gold)[1] == Counts(1, 1, 1)


def test_repeated_gold_ids_count_twice_and_strings_are_exact():
    gold = [row(1, "P01", ["5", "5", "017"])]
    system = [row(1, "P01", ["5", "17"])]
    assert counts_of(system, gold)[0] == Counts(tp=2, fp=1, fn=1)
    assert task1a_counts(*[citance_task1_maps(r)[0] for r in (system, gold)]) == Counts(2, 0, 0)


def test_official_aggregation_micro_and_macro():
    gold_a = [row(1, "P01", ["1", "2"]), row(2, "P02", ["3"])]
    sys_a = [row(1, "P01", ["1", "4"]), row(2, "P02", ["3"])]     # 1A: tp 2, fp 1, fn 1
    gold_b = [row(1, "P05", ["1"], rp="W95-0104")]
    sys_b = [row(1, "P05", ["2", "3"], rp="W95-0104")]            # 1A: tp 0, fp 2, fn 1
    res = official_of([(sys_a, gold_a), (sys_b, gold_b)])
    assert (res["task1a_tp"], res["task1a_fp"], res["task1a_fn"]) == (2, 3, 2)
    assert res["task1a_precision"] == pytest.approx(2 / 5)
    assert res["task1a_recall"] == pytest.approx(2 / 4)
    assert res["task1a_f1"] == pytest.approx(2 * 0.4 * 0.5 / 0.9)
    p_macro, r_macro = (2 / 3 + 0) / 2, (2 / 3 + 0) / 2
    assert res["task1a_precision_macro"] == pytest.approx(p_macro)
    assert res["task1a_f1_macro"] == pytest.approx(2 * p_macro * r_macro / (p_macro + r_macro))
    assert (res["task1b_tp"], res["task1b_fp"], res["task1b_fn"]) == (2, 0, 1)
    assert res["task1b_f1"] == pytest.approx(2 * 1.0 * (2 / 3) / (1 + 2 / 3))
    assert res["num_files"] == 2
    with pytest.raises(ValueError):
        official_of([])


def test_gold_against_itself_is_perfect():
    gold = [row(1, "P01", ["5"]), row(2, "P01", ["7", "8"], facet="['Aim_Citation','Method_Citation']"),
            row(3, "P02", [])]
    res = official_of([(gold, gold)])
    assert res["task1a_f1"] == 1.0 and res["task1b_f1"] == 1.0
    assert per_citance_of([(gold, gold)])["task1a_f1"] == 1.0


def test_bad_row_is_refused():
    with pytest.raises(ValueError, match="Reference Text"):
        official_task1_maps([{"Citance Number": "1"}])


# --------------------------------------------------------------------------- writing CSVs


def test_formatting():
    assert format_reference_offset(["17", "18"]) == "['17', '18']"
    assert format_reference_offset([17, "017", "17"]) == "['17']"
    assert format_reference_offset([]) == ""
    assert format_facets(["Method"]) == "Method_Citation"
    assert format_facets(["Method", "Result_Citation", "Method"]) == "['Method_Citation', 'Results_Citation']"
    assert format_facets([]) == "" and format_facets("Aim") == "Aim_Citation"
    with pytest.raises(ValueError):
        format_facets(["Background"])
    markup = reference_text_markup([("17", "A & B < C", "3"), ("18", "Second.")])
    assert markup == '<S sid ="17" ssid = "3">A &amp; B &lt; C</S><S sid ="18">Second.</S>'
    with pytest.raises(ValueError):
        reference_text_markup([("1", "   ")])
    with pytest.raises(ValueError):
        reference_text_markup([])


def test_write_task1_csv_round_trip(tmp_path):
    rows = [
        {"Citance Number": 1, "Reference Article": "C00-2123", "Citing Article": "C02-1050",
         "Citation Marker Offset": "0", "Citation Marker": "Tillmann and Ney, 2000", "Citation Offset": "0",
         "Citation Text": 'He said "dynamic programming", (Tillmann and Ney, 2000)',
         "Citation Text Clean": "He said dynamic programming", "Reference Offset": ["17", "18"],
         "Reference Text": reference_text_markup([("17", "First & one.", "3"), ("18", "Second.", "4")]),
         "Discourse Facet": ["Method", "Results"]},
        {"Citance Number": 2, "Reference Article": "C00-2123", "Citing Article": "E03-1007",
         "Citation Text": "An unanswered citance, with a comma", "Reference Offset": None},
        {"Citance Number": 3, "Reference Article": "C00-2123", "Citing Article": "E03-1007",
         "Citation Text": "Third", "Reference Offset": ["5"],
         "Reference Text": reference_text_markup([("5", "Five.")]), "Discourse Facet": ["Aim"],
         "not a column": "ignored"},
    ]
    path = tmp_path / "out" / "C00-2123.csv"
    assert write_task1_csv(path, rows) == 3
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0] == ",".join(TASK1_CSV_HEADER)
    assert not list(path.parent.glob(".*.tmp"))
    with open(path, newline="", encoding="utf-8") as handle:
        cells = list(csv.reader(handle))
    assert all(len(c) == len(TASK1_CSV_HEADER) for c in cells)
    assert cells[1][8] == "['17', '18']" and cells[1][10] == "['Method_Citation', 'Results_Citation']"
    assert cells[3][10] == "Aim_Citation"

    records = read_task1_csv(path)
    assert [r["citance_number"] for r in records] == [1, 2, 3]
    first = records[0]
    assert first["reference_offsets"] == ["17", "18"]
    assert first["facets"] == ["Method", "Results"]
    assert first["reference_text"] == "First &amp; one. Second."   # the reader strips tags, keeps entities
    assert first["citation_text"] == rows[0]["Citation Text"]
    assert first["citation_text_clean"] == "He said dynamic programming"
    assert records[1]["reference_offsets"] == [] and records[1]["facets"] == []

    raw = read_task1_rows(path)
    assert raw[0]["Reference Offset"] == "['17', '18']"
    # For files we write, raw rows and normalised records give the same official maps.
    assert official_task1_maps(raw) == official_task1_maps(records)
    assert citance_task1_maps(raw) == citance_task1_maps(records)
    assert official_of([(raw, raw)])["task1a_f1"] == 1.0


def test_read_task1_rows_skips_rows_of_the_wrong_length(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text(",".join(TASK1_CSV_HEADER) + "\n1,C00-2123,P01,0,m,0,t,t,['1'],\"<S sid=\"\"1\"\">a</S>\",Aim_Citation\n"
                    "2,too,short\n\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="1 row"):
        rows = read_task1_rows(path)
    assert len(rows) == 1 and rows[0]["Reference Text"] == '<S sid="1">a</S>'


def test_task1_row_from_an_annotation_record():
    record = {"citance_number": 4, "reference_article": "C00-2123", "citing_article": "P01-1027",
              "citation_marker": "Tillmann, 2000", "citation_text": "Plain citance.", "citation_text_clean": None,
              "reference_offsets": ["1", "94"], "reference_text_raw": '<S sid ="1" ssid = "1">One.</S>',
              "facets": ["Method"]}
    answered = task1_row(record)
    assert answered["Citation Marker Offset"] == "0" and answered["Citation Text Clean"] == "Plain citance."
    assert answered["Reference Offset"] == ["1", "94"] and answered["Discourse Facet"] == ["Method"]
    blank = task1_row(record, answers=False)
    assert blank["Reference Offset"] == blank["Reference Text"] == blank["Discourse Facet"] == ""
    unanswered = task1_row({**record, "reference_offsets": []})
    assert unanswered["Reference Text"] == "NA"
