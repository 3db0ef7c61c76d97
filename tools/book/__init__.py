"""The course as a web book: both editions' notebooks as static pages (``make book``).

- :mod:`tools.book.texts`: the book's own words, in Chinese and English;
- :mod:`tools.book.pages`: a notebook's page: student cells, and only the outputs that reveal no
  answer (the rule is in its docstring);
- :mod:`tools.book.sources`: one edition's Sphinx sources (landing page, pages, errata);
- :mod:`tools.book.build`: both editions built with Sphinx + MyST-NB into one site;
- ``conf.py``, :mod:`tools.book.extension`, ``templates/``, ``static/``: the Sphinx side (the
  language switch, MathJax served locally).

Must not: execute a notebook or use the network when building; import Sphinx outside ``conf.py``
and :mod:`tools.book.extension` (the tests import the rest without it).
"""
