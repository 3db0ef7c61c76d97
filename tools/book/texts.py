"""Every text the web book shows around the notebooks, in both languages (``zh``, ``en``).

The run-it-yourself box, the language switch, the landing page's words, the note that replaces an
interactive widget: each key has a Chinese and an English text, and a page gets the texts of its
own edition. ``{name}`` fields are filled by :func:`text`.

Owns: the book's own words. Must not: import Sphinx, the course's code or anything outside the
standard library; hold logic beyond filling fields.
"""
from __future__ import annotations

EDITIONS = ("zh", "en")
#: The other edition of each: where a page's language switch leads.
OTHER = {"zh": "en", "en": "zh"}
#: The language Sphinx is told (search splitting, the theme's own words).
SPHINX_LANGUAGE = {"zh": "zh_CN", "en": "en"}
#: The student notebooks and the executed solutions of each edition, from the repository root.
NOTEBOOKS = {"zh": "notebooks", "en": "notebooks/en"}
SOLUTIONS = {"zh": "solutions", "en": "solutions/en"}
ERRATA = {"zh": "ERRATA.md", "en": "ERRATA.en.md"}
READMES = {"zh": "README.md", "en": "README.en.md"}
#: How each README heads its course map.
COURSE_MAP_HEADING = {"zh": "## 课程地图", "en": "## Course map"}

TEXTS = {
    "project": {
        "zh": "分布式训练动手课",
        "en": "Distributed Training, hands-on",
    },
    "switch": {  # the link to the same section of the other edition, in that edition's language
        "zh": "English",
        "en": "中文",
    },
    "switch_title": {
        "zh": "本页的英文版（同一节）",
        "en": "This page in Chinese (the same section)",
    },
    "landing_intro": {
        "zh": ("一门分布式训练的 Jupyter 课程：数据并行、模型（张量）并行、流水线并行与混合并行。每个机制都在"
               "多个真实进程上运行，并与单进程的参考实现核对。这里是六个笔记本的网页版：图和输出来自已执行的"
               "笔记本，练习只有题目、提示和占位代码（没有答案）。"),
        "en": ("A Jupyter course on distributed training: data, model (tensor), pipeline and hybrid "
               "parallelism. Every mechanism runs on several real processes and is checked against "
               "a one-process reference. These are the six notebooks as web pages: the figures and "
               "outputs come from the executed notebooks; the exercises show their statements, "
               "hints and stubs only (no answers)."),
    },
    "landing_pages": {
        "zh": "笔记本与勘误表",
        "en": "Notebooks and errata",
    },
    "run_title": {
        "zh": "自己动手运行",
        "en": "Run it yourself",
    },
    "run_local": {
        "zh": ("**在自己的电脑上**（Linux 或 macOS，Python 3.11–3.14 和 make；Windows 请用 WSL2），"
               "在课程文件夹里（讲师发的学生包，或本仓库的一个克隆）运行："),
        "en": ("**On your computer** (Linux or macOS, Python 3.11–3.14 and make; on Windows, WSL2), "
               "in the course's folder (the handout from your instructor, or a clone of the "
               "repository):"),
    },
    "run_check": {
        "zh": "make check   # 安装到 .venv，然后检查安装能不能用（第一次要几分钟）",
        "en": "make check EDITION=en   # install into .venv, then check that the install works",
    },
    "run_lab": {
        "zh": "make lab     # 用 JupyterLab 打开课程，{where}",
        "en": "make lab EDITION=en     # open the course in JupyterLab, {where}",
    },
    "run_lab_page": {
        "zh": "本页是 {path}",
        "en": "this page is {path}",
    },
    "run_lab_course": {
        "zh": "从 {path} 开始",
        "en": "at {path}",
    },
    "run_hosted": {
        "zh": ("**托管笔记本**（Google Colab、Kaggle）：下载{download}（不含答案和输出），上传"
               "（Colab：File → Upload notebook；Kaggle：File → Import notebook，并在 Settings 里打开 "
               "Internet），先运行它的第一个代码单元：它从讲师发布的学生包安装课程（`{handout}`），"
               "然后全部运行（Run All）。"),
        "en": ("**Hosted** (Google Colab, Kaggle): download {download} (no answers, no outputs), "
               "upload it (Colab: File → Upload notebook; Kaggle: File → Import notebook, with "
               "Internet on in its Settings) and run its first code cell: it installs the course "
               "from the handout your instructor published (`{handout}`); then Run All."),
    },
    "run_hosted_download": {
        "zh": "本页的学生版笔记本",
        "en": "this page's student notebook",
    },
    "run_hosted_course": {
        "zh": "一个学生版笔记本（见各页）",
        "en": "a student notebook (on each page)",
    },
    "run_handout_unset": {
        "zh": ("学生包的地址由讲师设置（`labs/notebook/hosted.py` 里的 `HANDOUT_URL`）；这次构建里还没有"
               "设置，在它设置之前请用自己的电脑。"),
        "en": ("The handout's address is your instructor's setting (`HANDOUT_URL` in "
               "`labs/notebook/hosted.py`); it is not set in this build, so until it is, use your "
               "computer."),
    },
    "widget_note": {
        "zh": ("（这里是一个交互式控件（ipywidgets），只在运行中的笔记本里可用：见本页开头的「自己动手运行」。）"),
        "en": ("(An interactive widget (ipywidgets) is here; it works only in a running notebook: "
               "see \"Run it yourself\" at the top of this page.)"),
    },
    "license": {
        "zh": "许可：代码（`labs/`、`tools/` 等）为 MIT，文字与图为 CC BY 4.0。",
        "en": "Licence: the code (`labs/`, `tools/`, …) is under MIT, the prose and figures under CC BY 4.0.",
    },
    "show_setup": {  # the folded hosted-setup cell (myst-nb's hide-input; {type} is unused)
        "zh": "显示代码：Colab / Kaggle 的安装单元",
        "en": "Show the code: the Colab / Kaggle setup cell",
    },
    "hide_setup": {
        "zh": "隐藏代码",
        "en": "Hide the code",
    },
    "choose_edition": {
        "zh": "中文版",
        "en": "English edition",
    },
}


def text(key: str, edition: str, **fields: str) -> str:
    """The text ``key`` in ``edition``'s language, with ``fields`` filled in."""
    return TEXTS[key][edition].format(**fields) if fields else TEXTS[key][edition]


#: The theme's words that Sphinx's own Chinese catalog lacks (furo's navigation), by their English
#: text: what Chinese pages show instead (written as a gettext catalog by tools.book.build).
THEME_ZH = {
    "Next": "下一页",
    "Previous": "上一页",
    "Back to top": "回到顶部",
    "On this page": "本页内容",
    "Home": "首页",
    "Made with ": "主题：",  # followed by the theme's name, Furo
    "Please activate JavaScript to enable the search functionality.": "请启用 JavaScript 以使用搜索功能。",
}

#: The theme's words that no catalog reaches (furo and MyST-NB write them in English): the
#: screen-reader labels, the skip link, the icons' titles. tools.book.build replaces them in the
#: Chinese pages, each fragment as it stands in the HTML.
THEME_ZH_MARKUP = {
    'aria-label="Toggle site navigation sidebar"': 'aria-label="打开或关闭导航侧栏"',
    'aria-label="Toggle table of contents sidebar"': 'aria-label="打开或关闭本页目录"',
    'aria-label="Toggle Light / Dark / Auto color theme"': 'aria-label="切换浅色、深色或自动配色"',
    'aria-label="Toggle hidden content"': 'aria-label="展开或折叠"',
    "Skip to content": "跳到正文",
    "<title>Contents</title>": "<title>目录</title>",
    "<title>Menu</title>": "<title>菜单</title>",
    "<title>Expand</title>": "<title>展开</title>",
    "<title>Light mode</title>": "<title>浅色模式</title>",
    "<title>Dark mode</title>": "<title>深色模式</title>",
    "<title>Auto light/dark, in light mode</title>": "<title>自动配色（现为浅色）</title>",
    "<title>Auto light/dark, in dark mode</title>": "<title>自动配色（现为深色）</title>",
}
