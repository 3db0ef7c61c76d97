"""The catalog of answers every check must grade right (issue 37, item 7): plausible wrong
answers of every kind, each with the grade it must get (0, or flagged for review where no
check can stop it), and right answers in unusual styles that must keep full marks. One module
of answers per notebook (``answers_2_x.py``); ``test_catalog.py`` grades each both ways."""
