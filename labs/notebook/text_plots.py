"""Messages of the figures: labels, titles, legends (labs.notebook.plots, labs.notebook.fonts and each package's
plots module).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    "no_cjk_font": {
        "zh": "（图中文字改用英文：这台机器没有中文字体 {family}。"
              "运行 pip install mplfonts==0.0.11 后重启内核，图就会显示中文。）",
        "en": "(Figure labels are in English: this machine has no CJK font {family}. "
              "Run pip install mplfonts==0.0.11 and restart the kernel to get them in Chinese.)",
    },
    # --- labs.notebook.plots: collectives (2.0) ------------------------------------------------------
    "element_index": {
        "zh": "元素下标",
        "en": "element index",
    },
    "stage_before": {
        "zh": "调用前",
        "en": "before",
    },
    "stage_after": {
        "zh": "调用后",
        "en": "after",
    },
    "message_size": {
        "zh": "消息大小",
        "en": "message size",
    },
    "time_per_all_reduce": {
        "zh": "每次 all-reduce 的耗时（ms）",
        "en": "time per all-reduce (ms)",
    },
    "bus_bandwidth": {
        "zh": "总线带宽（GB/s）",
        "en": "bus bandwidth (GB/s)",
    },
    "algorithm_bandwidth": {
        "zh": "算法带宽（GB/s）",
        "en": "algorithm bandwidth (GB/s)",
    },
    # --- labs.notebook.plots: timelines (2.2, 2.3, 2.4) -----------------------------------------------
    "time_ms": {
        "zh": "时间（ms）",
        "en": "time (ms)",
    },
    "time_units": {
        "zh": "时间（单位：t_F = 1）",
        "en": "time (units, t_F = 1)",
    },
    "row_idle": {
        "zh": "{row}\n空闲 {idle:.0%}",
        "en": "{row}\nidle {idle:.0%}",
    },
    "mode_real_compute": {
        "zh": "真实计算",
        "en": "real compute",
    },
    "mode_simulated": {
        "zh": "模拟（理想）",
        "en": "simulated (ideal)",
    },
    "kind_forward": {
        "zh": "前向",
        "en": "forward",
    },
    "kind_backward": {
        "zh": "反向",
        "en": "backward",
    },
    "kind_compute": {
        "zh": "计算",
        "en": "compute",
    },
    "kind_communication": {
        "zh": "通信",
        "en": "communication",
    },
    "kind_grad_input": {
        "zh": "输入的梯度（grad input）",
        "en": "grad input",
    },
    "kind_grad_weight": {
        "zh": "权重的梯度（grad weight）",
        "en": "grad weight",
    },
    "kind_idle": {
        "zh": "空闲",
        "en": "idle",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # axis labels, panel titles and legend entries of the figures
    "element_index", "stage_before", "stage_after", "message_size", "time_ms",
    "mode_real_compute", "mode_simulated", "kind_forward", "kind_backward", "kind_compute",
    "kind_communication", "kind_grad_input", "kind_grad_weight", "kind_idle",
})
