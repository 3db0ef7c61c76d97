# The course's commands. `make lab` opens the course, `make test` runs every test.
# Both set up .venv first (and reuse it when it is already complete).

# The Pythons the pinned requirements have wheels for (torch 2.13: up to 3.14; numpy 2.4 and
# matplotlib 3.11: from 3.11); pyproject.toml's requires-python and environment.yml say the same
# (tests/course/test_python_guard.py checks). The first supported python3.X found is used.
PYTHON_VERSIONS := 3.11 3.12 3.13 3.14
ifndef PYTHON
PYTHON := $(firstword $(foreach v,$(PYTHON_VERSIONS),$(shell command -v python$(v))) $(shell command -v python3))
endif
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.labs-ready
DEV_READY := $(VENV)/.labs-dev-ready

# One line and a stop, before any download, when the interpreter that would build $(VENV) is not
# one of PYTHON_VERSIONS (in Chinese when LABS_LANG or LANG says zh, else in English).
SETUP_PYTHON = $(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON))
SETUP_PYTHON_FOUND = $(or $(if $(SETUP_PYTHON),$(shell $(SETUP_PYTHON) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)),none)
PYTHON_NEEDED = $(firstword $(PYTHON_VERSIONS))-$(lastword $(PYTHON_VERSIONS))
PYTHON_HOWTO = uv python install 3.11, pyenv install 3.11 or conda create -n py311 python=3.11
PYTHON_ERROR_en = found Python $(1) ($(or $(SETUP_PYTHON),no python3 on PATH)), the course needs Python $(PYTHON_NEEDED): get one with $(PYTHON_HOWTO), then run make lab PYTHON=/path/to/python3.11
PYTHON_ERROR_zh = 找到的 Python 是 $(1)（$(or $(SETUP_PYTHON),PATH 上没有 python3)），本课程需要 Python $(PYTHON_NEEDED)：用 $(PYTHON_HOWTO) 装一个，再运行 make lab PYTHON=/path/to/python3.11
check_python = $(foreach found,$(SETUP_PYTHON_FOUND),$(if $(filter $(addsuffix .%,$(PYTHON_VERSIONS)),$(found)),,\
	$(error $(call PYTHON_ERROR_$(if $(filter zh%,$(or $(LABS_LANG),$(LANG))),zh,en),$(found)))))
SUBMISSIONS ?= submissions

# `make test-portability`: the tests marked `numerics` (their results depend on the CPU kernels
# or on the intra-op threads per rank; tests/course/test_markers.py says which modules must be
# marked) once more per variant of CPU kernels and threads per rank (capability:threads), so
# that a kernel-dependent rounding difference fails here, not on a student's machine.
# Tolerances: labs/numerics.py. The launcher, the grader, the notebooks and the browser test no
# CPU-kernel numerics: they run in `make test` only.
# OMP_WAIT_POLICY=PASSIVE: two threads per rank oversubscribe the cores (8 ranks x 2 threads on
# 2 cores), and OpenMP's idle threads would spin for each other (the avx2:2 pass took 7 min 22 s
# here, 3D-training tests 10x slower); passive waiting changes no result, only the spinning.
PORTABILITY ?= default:1 avx2:2

.PHONY: setup lab test check test-portability test-hosted test-secrets test-editions mutants notebooks execute handout grade gradescope doctor slides bench clean

setup: $(READY)

$(READY): requirements.txt pyproject.toml
	$(check_python)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps -e .
	@touch $(READY)

# The test tools (requirements-dev.txt), only for the targets that run tests: a second stamp.
$(DEV_READY): $(READY) requirements-dev.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	@touch $(DEV_READY)

# `make lab EDITION=en` opens the English edition (notebooks/en/) and runs the check in English.
EDITION ?= zh
$(if $(filter-out zh en,$(EDITION)),$(error EDITION is zh or en, not $(EDITION)))
EDITION_DIR := notebooks$(if $(filter en,$(EDITION)),/en)
# EDITION=en: every target below speaks English (the lab, the handout, the grader, the doctor)
SPEAK := $(if $(filter en,$(EDITION)),LABS_LANG=en )

lab: setup
	$(SPEAK)$(BIN)/python -m labs doctor || true
	$(BIN)/jupyter lab --ServerApp.root_dir=. --LabApp.default_url=/lab/tree/$(EDITION_DIR) \
		$(if $(filter 0,$(shell id -u)),--allow-root)

# The notebook bodies run once per `make test`, in English: the real-browser test
# (tests/notebooks/test_browser.py) Run Alls the English student notebooks (notebooks/en/: only
# the unfinished exercises may error, English output only, figures, widgets) where Chromium is
# installed, as in CI; on a machine without it, nbval runs those instead. The answers run in the
# notebook tests' grader run. test_edition proves the Chinese edition the same code up to its
# strings, and its strings unable to change a run (labs/exercises/edition_runtime.py: the same
# interpolated expressions, compatible format specs, a one-to-one renaming of literals);
# `make test-editions` (CI, after make test) still runs the Chinese solutions end to end
# (tests/notebooks/test_solutions_run.py: every cell, answers included, two kernels at a time).
# LABS_BROWSER_EDITIONS="zh en" runs both editions in the browser.
CHROMIUM := $(shell command -v $${LABS_CHROMIUM:-chromium} chromium-browser google-chrome 2>/dev/null | head -1)
NBVAL_STUDENTS := $(if $(CHROMIUM),,$(sort $(wildcard notebooks/en/*.ipynb)))
NBVAL := --nbval-lax --nbval-current-env --nbval-cell-timeout=300

# `make test`: everything, as CI runs it (the README says how long it takes).
# OMP_WAIT_POLICY=PASSIVE: two notebooks' kernels and the ranks share the cores; OpenMP's idle
# threads then sleep instead of spinning (the solutions' run took 116 s spinning, 107 s passive);
# no result changes.
test: $(DEV_READY)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest tests $(NBVAL_STUDENTS) $(NBVAL) -m "not hosted and not secrets and not editions and not book" --durations=25

test-editions: $(DEV_READY)
	OMP_WAIT_POLICY=PASSIVE $(BIN)/python -m pytest tests -m editions -p no:cacheprovider --durations=10

# `make test-hosted`: the hosted-notebook bootstrap in a Colab-like virtual environment built
# from the package index (ipywidgets 7.7.1): a few minutes and the network, so CI runs it after
# `make test` rather than inside it.
test-hosted: $(DEV_READY)
	$(BIN)/python -m pytest tests -m hosted -p no:cacheprovider

# `make book [BOOK=book]`: the course as a static web book, both editions (BOOK/zh/, BOOK/en/;
# tools/book/): the student notebooks' cells with the executed solutions' outputs that reveal no
# answer, the errata, search, a language switch; offline, nothing executed (about 20 s on 2 cores).
# Its tools (requirements-book.txt; no torch needed) go into .venv behind a stamp of their own.
# `make test-book`: its tests (tests/book/, marker `book`, Chromium for the browser test) on BOOK.
BOOK ?= book
BOOK_READY := $(VENV)/.labs-book-ready
.PHONY: book test-book

$(BOOK_READY): requirements-book.txt
	$(check_python)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements-book.txt
	@touch $(BOOK_READY)

book: $(BOOK_READY)
	$(BIN)/python -m tools.book build --out $(BOOK)

test-book: $(DEV_READY) $(BOOK_READY)
	LABS_BOOK=$(BOOK) $(BIN)/python -m pytest tests -m book -p no:cacheprovider --durations=10

# `make check`: the tests not marked `slow` (no grader runs, notebooks, JupyterLab, process
# faults or waits for a timeout, benchmarks, multi-node or torchrun runs; of a test run at several
# rank counts, the smaller ones) plus one short notebook end to end (2.0: ranks launched,
# collectives, figures), for a contributor between commits and for a student who wants to know
# the install works. Every package keeps rank-launching tests in it.
CHECK_NOTEBOOK ?= solutions/2.0_collectives.ipynb
check: $(DEV_READY)
	$(BIN)/python -m pytest tests $(CHECK_NOTEBOOK) -m "not slow" $(NBVAL) --durations=10

# `make test-secrets`: every exercise's reference answer gets full marks under 1,000 random
# instructor secrets (tests/catalog/test_secrets.py says how the cases on ranks are chosen);
# CI runs it after make test, which leaves it out (LABS_TEST_SECRETS=20 for a quick look).
test-secrets: $(DEV_READY)
	$(BIN)/python -m pytest tests -m secrets -p no:cacheprovider --timeout=1200 --durations=10

# `make mutants [EXERCISES="ex2_3_1f1b_executor ..."]`: how strong each check is -- the reference
# answer mutated (a call or a wait dropped, SUM for AVG, a group swapped, an order reversed, a
# bound off by one, ...), the exercise's check run on every mutant (python -m grader.mutants):
# mutants/report.json and the table the README shows.
mutants: setup
	$(BIN)/python -m grader.mutants $(EXERCISES)

test-portability: $(DEV_READY)
	@status=0; for variant in $(PORTABILITY); do \
		capability=$${variant%%:*}; threads=$${variant##*:}; \
		echo "=== numerics tests with ATEN_CPU_CAPABILITY=$$capability LABS_THREADS_PER_RANK=$$threads"; \
		ATEN_CPU_CAPABILITY=$$capability LABS_THREADS_PER_RANK=$$threads OMP_WAIT_POLICY=PASSIVE \
			$(BIN)/python -m pytest tests -m "numerics and not secrets" -p no:cacheprovider || status=1; \
	done; exit $$status

notebooks: setup
	$(BIN)/python -m labs.exercises.generate --src solutions --dst notebooks
	$(BIN)/python -m labs.exercises.generate --src solutions/en --dst notebooks/en
	$(BIN)/python -m labs.exercises.readme --write README.md

execute: setup
	$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=600 solutions/*.ipynb
	$(BIN)/python -m labs.exercises.edition sync
	LABS_LANG=en $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
		--ExecutePreprocessor.timeout=600 solutions/en/*.ipynb
	$(MAKE) notebooks

# `make handout [EDITION=zh|en] [HANDOUT=handout]`: what students get, both editions unless
# EDITION is given (grader/handout.py), and $(HANDOUT).zip (what hosted notebooks install):
# the student notebooks regenerated first, labs/, the students' README and Makefile
# (grader/handout_files/); no solutions/, no grader/, no tests.
HANDOUT ?= handout
handout: notebooks
	$(SPEAK)$(BIN)/python -m grader.handout --out $(HANDOUT) --zip --edition $(if $(filter command line,$(origin EDITION)),$(EDITION),both)

# SECRET="any words": handed to the grader in its environment (LABS_GRADE_SECRET), quoted by the
# shell, never on a command line that `ps` shows.
export SECRET
grade: setup
	$(SPEAK)$(if $(SECRET),LABS_GRADE_SECRET="$$SECRET" )$(BIN)/python -m grader $(SUBMISSIONS) \
		--out grades $(if $(JOBS),--jobs $(JOBS))

# `make gradescope SECRET="..."`: the autograder zip to upload in Gradescope (grader/gradescope.py)
gradescope: setup
	$(SPEAK)$(if $(SECRET),LABS_GRADE_SECRET="$$SECRET" )$(BIN)/python -m grader.gradescope \
		--out gradescope.zip

# `make doctor [EDITION=en]`: the pre-workshop check students run at home (INSTRUCTORS.md): cores,
# memory, ports, real 2-, 4- and 8-rank launches and their times; on trouble, what to do.
doctor: setup
	$(SPEAK)$(BIN)/python -m labs doctor

# `make slides [SLIDES=slides] [SLIDE_ASSETS=DIR]`: reveal.js decks of the solution notebooks, both
# editions (SLIDES/zh/, SLIDES/en/; tools/slides.py). The decks load reveal.js from its CDN when
# opened; SLIDE_ASSETS (filled once by `python tools/slides.py fetch-assets DIR`) makes them offline.
SLIDES ?= slides
slides: setup
	$(BIN)/python tools/slides.py build --out $(SLIDES)$(if $(SLIDE_ASSETS), --assets '$(SLIDE_ASSETS)')

bench: setup
	$(BIN)/python -m labs.bench launch
	$(BIN)/python -m labs.bench collectives
	$(BIN)/python -m labs.bench ddp
	$(BIN)/python -m labs.bench tp
	$(BIN)/python -m labs.bench pp
	$(BIN)/python -m labs.bench hybrid
	$(BIN)/python -m labs.bench planner

clean:
	rm -rf $(VENV) grades .pytest_cache
