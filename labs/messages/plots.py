"""Messages of the figures: labels, titles, legends (labs.plots, labs.fonts and each package's
plots module)."""

MESSAGES = {
    "no_cjk_font": {
        "zh": "（图中文字改用英文：这台机器没有中文字体 {family}。"
              "运行 pip install mplfonts==0.0.11 后重启内核，图就会显示中文。）",
        "en": "(Figure labels are in English: this machine has no CJK font {family}. "
              "Run pip install mplfonts==0.0.11 and restart the kernel to get them in Chinese.)",
    },
}
