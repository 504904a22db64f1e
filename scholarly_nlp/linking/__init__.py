"""Citance linking: find the reference-paper sentences a citing sentence refers to
(CL-SciSumm Task 1A). :mod:`.bm25_stage` is the candidate-retrieval stage."""
