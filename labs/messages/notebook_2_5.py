"""Messages of notebook 2.5 (summary): what its own code cells print."""

MESSAGES = {
    # --- 1. the paradigm table ---------------------------------------------------------------
    "paradigm_row": {
        "zh": "{name:<8} {degree:<22} 每卡每步发送 {comm_gib:8.1f} GiB，"
              "显存 {memory_gib:7.1f} GiB（可用 {usable_gib:.0f} GiB），放得下：{fits}",
        "en": "{name:<8} {degree:<22} sends {comm_gib:8.1f} GiB per GPU per step, "
              "memory {memory_gib:7.1f} GiB of {usable_gib:.0f} usable, fits {fits}",
    },
    # --- 2. the five steps on the textbook's scenarios ---------------------------------------
    "scenario": {"zh": "== {name}：{billions:.2f}B 参数",
                 "en": "== {name}: {billions:.2f}B parameters"},
    "five_steps_result": {
        "zh": "  五步流程 -> {config}：步时 {step_s:.3g} s，MFU {mfu:.0%}",
        "en": "  five steps -> {config}: step {step_s:.3g} s, MFU {mfu:.0%}",
    },
    "search_result": {
        "zh": "  搜索     -> {config}：步时 {step_s:.3g} s，MFU {mfu:.0%}"
              "（五步流程的步时 {five_steps_slower:+.0%}）",
        "en": "  search     -> {config}: step {step_s:.3g} s, MFU {mfu:.0%} "
              "({five_steps_slower:+.0%} for the five steps)",
    },
    # --- 3. where the five steps are too simple ----------------------------------------------
    "top_five": {"zh": "  前 5 名：{layouts}", "en": "  top 5: {layouts}"},
    "long_sequence": {
        "zh": "序列长度 {seq:>7,}：激活值 {activations_gib:6.1f} GiB，总计 {total_gib:6.1f} GiB"
              "（可用 {usable_gib:.0f} GiB）-> 放得下：{fits}",
        "en": "seq {seq:>7,}: activations {activations_gib:6.1f} GiB, total {total_gib:6.1f} GiB "
              "of {usable_gib:.0f} usable -> fits {fits}",
    },
    # --- 4. the planner set from code ----------------------------------------------------------
    "planner_result": {
        "zh": "{config}：每卡 {memory_gib:.1f} GiB，bubble {bubble:.1%}，步时 {step_s:.1f} s，"
              "MFU {mfu:.0%}；五步流程在第 {decided_step} 步做出决定",
        "en": "{config}: {memory_gib:.1f} GiB per GPU, bubble {bubble:.1%}, step {step_s:.1f} s, "
              "MFU {mfu:.0%}; the five steps decide at step {decided_step}",
    },
    # --- 5. one node, then two ---------------------------------------------------------------
    "one_node_commands": {"zh": "单节点：\n  {commands}", "en": "one node:\n  {commands}"},
    "two_nodes_commands": {
        "zh": "两个节点（每条命令在各自的机器上运行，把 localhost 换成第一台机器的地址）：\n  {commands}",
        "en": "two nodes (run each on its own machine, with the first machine's address instead "
              "of localhost):\n  {commands}",
    },
    "final_loss": {
        "zh": "最终的 loss：单节点 {one_node}，两个节点 {two_nodes} -> 相等：{equal}",
        "en": "final loss: one node {one_node}, two nodes {two_nodes} -> equal: {equal}",
    },
    "wall_time": {
        "zh": "用时：{one_node_s:.1f} s 与 {two_nodes_s:.1f} s（在这个规模上，主要花在启动进程与会合上）",
        "en": "wall time: {one_node_s:.1f} s and {two_nodes_s:.1f} s "
              "(process start and rendezvous dominate at this size)",
    },
    # --- 6. the capstone's example scenarios ---------------------------------------------------
    "shown_scenario": {"zh": "{name}：{billions:.1f}B 参数，{gpu}",
                       "en": "{name} - {billions:.1f}B parameters, {gpu}"},
    # --- the last cell -------------------------------------------------------------------------
    "ran_in": {"zh": "整本笔记本运行用时 {seconds:.0f} s", "en": "notebook ran in {seconds:.0f} s"},
}
