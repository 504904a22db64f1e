"""Readers turn files into :class:`scholarly_nlp.Paper` objects; see :mod:`.dispatch`."""
