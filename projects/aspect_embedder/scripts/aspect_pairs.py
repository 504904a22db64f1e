"""Weak supervision for the aspect embedder: papers paired with what others say about them.

For every ScisummNet reference paper (ACL Anthology, the domain of CSFCube) the anchor is
its title and abstract; the positive is a pseudo-abstract made of the citances that other
papers wrote about it (citation markers removed, up to ``--max-citances``, most
authoritative citing papers first). Citances state what the citing authors found
notable: its method, its results, the problem it addresses, so the pair teaches which parts
of an abstract carry a paper's identity per aspect. This is the textual signal Aspire
learns from (co-citation context sentences); our corpus has citances, and only a few
co-citations (below).
No CSFCube relevance label is used, and reference papers whose title matches a CSFCube
query paper (``queries-release.csv``) are left out.

``--cocitations`` adds Aspire's own signal where the corpus has it: two reference papers
cited by the same sentence of the same citing paper (the sentence appears in both papers'
``citing_sentences.json``) are co-cited, and their two abstracts become one more group.
``--cocitation-facets PIPELINE`` also says which aspect a co-citation is evidence for: the
pipeline's ``citance_facet_classifier`` labels each co-citing sentence (why both are cited),
and the group teaches only the aspects of those facets (Method -> method, Results -> result,
Aim / Hypothesis / Implication -> background; ``paper_meta["aspect_group_aspects"]``).

Writes a DocBin of paper Docs, anchor then positive, with ``paper_meta["aspect_group"]``
set to the reference paper id (``cocited:A+B`` for a co-citation group); the positive's
``paper_meta["aspect_paper"]`` names the paper its citances are about, so that paper's
abstract is never its negative when a co-citation group shares a batch with it.

    python scripts/aspect_pairs.py SCISUMMNET_DIR QUERIES_CSV OUT.spacy [--max-citances 8] [--cocitations]
        [--cocitation-facets scholarly_core]
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import warnings
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import scholarly_nlp
from scholarly_nlp.metrics import normalize_facet
from scholarly_nlp.retrieval import strip_citation_markers
from scholarly_nlp.readers import AbstractRecord, abstract_doc
from scholarly_nlp.readers import read_citing_sentences, read_reference_xml

GROUP_KEY = "aspect_group"
GROUP_ASPECTS_KEY = "aspect_group_aspects"
PAPER_KEY = "aspect_paper"
FACET_ASPECTS = {"Aim": "background", "Hypothesis": "background", "Implication": "background",
                 "Method": "method", "Results": "result"}
MIN_ABSTRACT_SENTENCES = 2
MIN_CITANCES = 2


def normalise_title(title: str) -> str:
    """Lower-case letters and digits only, for matching titles across sources."""
    return re.sub(r"[^a-z0-9]+", "", title.lower())


def query_titles(queries_csv: Path) -> set[str]:
    """Normalised titles of CSFCube's query papers (none, with a warning, without the file)."""
    if not queries_csv.exists():
        print(f"warning: {queries_csv} not found: no paper is excluded as a CSFCube query", file=sys.stderr)
        return set()
    with open(queries_csv, newline="", encoding="utf-8") as fh:
        return {normalise_title(row["title"]) for row in csv.DictReader(fh)}


def reference_pair(rp_dir: Path, max_citances: int) -> tuple[AbstractRecord, AbstractRecord] | None:
    """(abstract record, citance record) of one ScisummNet folder, or None if too thin."""
    xml = rp_dir / "Reference_XML" / f"{rp_dir.name}.xml"
    citing = rp_dir / "citing_sentences.json"
    if not xml.exists() or not citing.exists():
        return None
    paper = read_reference_xml(xml, paper_id=rp_dir.name)
    abstract = [paper_sentence for block in paper.blocks_of("abstract")
                for paper_sentence in _block_sentences(block)]
    if len(abstract) < MIN_ABSTRACT_SENTENCES:
        return None
    citances = sorted(read_citing_sentences(citing), key=lambda c: -c["citing_paper_authority"])
    texts = []
    for citance in citances:
        text = strip_citation_markers(citance["clean_text"] or citance["raw_text"])
        if len(text.split()) >= 5 and text not in texts:
            texts.append(text)
        if len(texts) >= max_citances:
            break
    if len(texts) < MIN_CITANCES:
        return None
    anchor = AbstractRecord(rp_dir.name, paper.title, abstract)
    positive = AbstractRecord(f"{rp_dir.name}#citances", "", texts)
    return anchor, positive


def cocitations(scisummnet_dir: Path) -> dict:
    """{(A, B): [citing sentences]}: sorted reference-paper id pairs cited together by one
    sentence of one citing paper, with the clean text of each sentence that cites both.

    A citing sentence is the same when its citing paper id and its lower-cased clean text
    match in both papers' ``citing_sentences.json``. Entries without a clean text are left
    out: their raw text is often a window of several sentences or a table row.
    """
    cited_by: dict = defaultdict(set)
    original: dict = {}
    for rp_dir in sorted(p for p in scisummnet_dir.iterdir() if p.is_dir()):
        path = rp_dir / "citing_sentences.json"
        if not path.exists():
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                citances = read_citing_sentences(path)
            except scholarly_nlp.ScholarlyNLPError as exc:
                print(f"skipped {rp_dir.name}'s citing sentences: {exc}", file=sys.stderr)
                continue
        for citance in citances:
            clean = " ".join((citance["clean_text"] or "").split())
            if clean:
                key = (citance["citing_paper_id"], clean.lower())
                cited_by[key].add(rp_dir.name)
                original.setdefault(key, clean)
    pairs: dict = defaultdict(list)
    for key, papers in sorted(cited_by.items()):
        for pair in combinations(sorted(papers), 2):
            pairs[pair].append(original[key])
    return dict(sorted(pairs.items()))


def facet_aspects(pipeline: str, sentences_per_pair: dict) -> dict:
    """{pair: sorted query aspects} from the facets the pipeline's classifier gives the
    co-citing sentences (the union over a pair's sentences). A pipeline whose facet labels
    do not all map to an aspect is a ScholarlyNLPError naming them."""
    if not sentences_per_pair:
        return {}
    nlp = scholarly_nlp.load(pipeline, components=["citance_facet_classifier"], require=["citance_facet_classifier"])
    classifier = nlp.get_pipe("citance_facet_classifier")
    label_aspect = {}
    for label in classifier.labels:
        try:
            label_aspect[label] = FACET_ASPECTS[normalize_facet(label)]
        except ValueError:
            pass
    unmapped = [label for label in classifier.labels if label not in label_aspect]
    if unmapped:
        raise scholarly_nlp.ScholarlyNLPError(
            f"{pipeline}: the facet labels {unmapped} map to no aspect; known facets: {', '.join(FACET_ASPECTS)}")
    texts = sorted({text for sentences in sentences_per_pair.values() for text in sentences})
    facets = dict(zip(texts, classifier.classify(texts)))
    return {pair: sorted({label_aspect[f] for text in sentences for f in facets[text]})
            for pair, sentences in sentences_per_pair.items()}


def _block_sentences(block) -> list[str]:
    spans = block.sentences or [(0, len(block.text))]
    return [block.text[a:b].strip() for a, b in spans if block.text[a:b].strip()]


def main(argv: list[str] | None = None) -> int:
    """Write the pairs DocBin; prints how many papers were used and skipped."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scisummnet_dir", type=Path)
    parser.add_argument("queries_csv", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--max-citances", type=int, default=8)
    parser.add_argument("--limit", type=int, default=0, help="at most this many papers (0: all)")
    parser.add_argument("--cocitations", action="store_true",
                        help="also pair the abstracts of papers cited by the same citing sentence")
    parser.add_argument("--cocitation-facets", metavar="PIPELINE", default=None,
                        help="with --cocitations: a co-citation group teaches only the aspects of the "
                             "facets this pipeline's citance_facet_classifier gives its citing sentences")
    args = parser.parse_args(argv)
    if args.cocitation_facets and not args.cocitations:
        parser.error("--cocitation-facets needs --cocitations")
    excluded = query_titles(args.queries_csv)
    nlp = scholarly_nlp.blank()
    docs, skipped, held_out = [], 0, 0
    anchors: dict = {}
    for rp_dir in sorted(p for p in args.scisummnet_dir.iterdir() if p.is_dir()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                pair = reference_pair(rp_dir, args.max_citances)
            except scholarly_nlp.ScholarlyNLPError as exc:
                print(f"skipped {rp_dir.name}: {exc}", file=sys.stderr)
                pair = None
        if pair is None:
            skipped += 1
            continue
        if normalise_title(pair[0].title) in excluded:
            held_out += 1
            continue
        anchors[rp_dir.name] = pair[0]
        anchor_doc, citances_doc = grouped_docs(pair, rp_dir.name, nlp)
        citances_doc._.paper_meta = {**citances_doc._.paper_meta, PAPER_KEY: rp_dir.name}
        docs.extend((anchor_doc, citances_doc))
        if args.limit and len(docs) >= 2 * args.limit:
            break
    n_pairs = len(docs) // 2
    n_cocited, n_unlabelled, taught = 0, 0, Counter()
    if args.cocitations:
        pairs = {pair: texts for pair, texts in cocitations(args.scisummnet_dir).items()
                 if pair[0] in anchors and pair[1] in anchors}
        try:
            aspects = facet_aspects(args.cocitation_facets, pairs) if args.cocitation_facets else {}
        except scholarly_nlp.ScholarlyNLPError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        for (a, b) in pairs:
            if args.cocitation_facets and not aspects[(a, b)]:
                n_unlabelled += 1  # the classifier gave its sentences no facet (e.g. min_labels 0)
                continue
            meta = {GROUP_ASPECTS_KEY: aspects[(a, b)]} if args.cocitation_facets else {}
            docs.extend(grouped_docs((anchors[a], anchors[b]), f"cocited:{a}+{b}", nlp, meta))
            taught.update(meta.get(GROUP_ASPECTS_KEY, []))
            n_cocited += 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    scholarly_nlp.save_docbin(docs, args.output)
    print(f"{n_pairs} pairs written to {args.output}; {skipped} papers too thin, "
          f"{held_out} excluded as CSFCube queries"
          + (f"; {n_cocited} co-cited pairs added" if args.cocitations else "")
          + (" (aspects taught: " + ", ".join(f"{k} {v}" for k, v in sorted(taught.items()))
             + f"; {n_unlabelled} left out, no facet)" if args.cocitation_facets else ""))
    return 0


def grouped_docs(records, group: str, nlp, meta: dict | None = None) -> list:
    """Docs of ``records``, each with ``paper_meta["aspect_group"]`` set to ``group`` (and ``meta``)."""
    docs = []
    for record in records:
        doc = abstract_doc(record, nlp)
        doc._.paper_meta = {**(doc._.paper_meta or {}), **(meta or {}), GROUP_KEY: group}
        docs.append(doc)
    return docs


if __name__ == "__main__":
    sys.exit(main())
