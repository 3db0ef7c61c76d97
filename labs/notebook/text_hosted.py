"""Messages of the hosted bootstrap (labs.notebook.hosted): what the first cell of a notebook says on Google
Colab or Kaggle after installing the course.

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

MESSAGES = {
    # --- the comment that opens the bootstrap cell (labs.exercises.hosted_cell) -------------
    "cell_comment": {
        "zh": ("# Google Colab / Kaggle：请先运行这个单元格。在那里它从讲师发布的学生版课程包安装课程，\n"
               "# 保留运行时自带的 torch、numpy 和 ipywidgets；在别处它只设定笔记本的语言。\n"),
        "en": ("# Google Colab / Kaggle: run this cell first. There it installs the course from the\n"
               "# handout your instructor published, keeping the runtime's own torch, numpy and\n"
               "# ipywidgets; anywhere else it only sets the notebook's language.\n"),
    },
    # --- what the bootstrap says on a hosted runtime (labs.notebook.hosted) ----------------------------
    # one line: ready, then what it kept (if anything) and what it installed, as clauses
    "ready": {
        "zh": "课程已装好（{runtime}，{distribution} {version}）",
        "en": "course installed ({runtime}, {distribution} {version})",
    },
    "ready_kept": {
        "zh": "保留运行时自带的 {kept}",
        "en": "the runtime's own {kept} kept",
    },
    "ready_installed": {
        "zh": "新装：{installed}",
        "en": "newly installed: {installed}",
    },
    "ready_nothing_installed": {
        "zh": "没有新装任何包",
        "en": "no package newly installed",
    },
    "torch_untested": {
        "zh": "提示：这里的 torch {version} 在课程支持的范围（>= {low}, < {high}）内，但课程只在 "
              "{tested} 上测试过；个别数字可能与讲义略有出入",
        "en": "note: this runtime's torch {version} is in the course's range (>= {low}, < {high}) "
              "but only {tested} is tested; a few numbers may differ slightly from the text",
    },
    "torch_outside": {
        "zh": "警告：这里的 torch {version} 不在课程支持的范围（>= {low}, < {high}）内；"
              "运行 python -m labs doctor 看哪些小节会出问题",
        "en": "warning: this runtime's torch {version} is outside the course's range "
              "(>= {low}, < {high}); run python -m labs doctor to see which sections break",
    },
    "torch_api_missing": {
        "zh": "这里的 torch {version} 没有 {name}：笔记本 {notebooks} 中用到它的小节在这个运行时上会出错"
              "（课程不替换运行时的 torch）",
        "en": "this runtime's torch {version} has no {name}: the sections of notebook(s) {notebooks} "
              "that use it fail on this runtime (the course does not replace the runtime's torch)",
    },
    "torch_missing": {
        "zh": "这个运行时没有 torch：课程不会替运行时安装 torch；请换一个带 PyTorch 的运行时",
        "en": "this runtime has no torch: the course does not install one over the runtime's; "
              "choose a runtime that comes with PyTorch",
    },
    "install_failed": {
        "zh": "安装缺少的依赖 {names} 失败（pip 退出码 {code}）；Kaggle 上请先在 Settings 里打开 "
              "Internet，再重新运行这个单元格",
        "en": "installing the missing requirements {names} failed (pip exit code {code}); on "
              "Kaggle, turn Internet on in the notebook's Settings, then run this cell again",
    },
}
