"""Messages of the readings of notebook 2.3 (``interpret_*`` in labs.pipeline.experiments):
why a measurement differs from the formula, each reading's verdicts, and the impossible
measurements they refuse (noise: what to rerun). Only text: no logic.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- why a measurement differs from the formula --------------------------------------------
    "why_real": {
        "zh": "小模型的一次前向只要零点几毫秒，send/recv 的延迟、Python 的开销都和计算一样长，"
              "它们都算进了空闲；公式只数调度本身造成的空等。在 GPU 上计算远比这些开销长，实测会接近公式",
        "en": "one forward of this small model takes a fraction of a millisecond, and the "
              "send/recv latency and Python's overhead take as long as the compute; all of them "
              "count as idle, while the formula counts only the waiting the schedule itself "
              "causes. On GPUs the compute is far longer than these overheads, and the "
              "measurement comes close to the formula",
    },
    "why_real_crowded": {
        "zh": "小模型的一次前向只要零点几毫秒，send/recv 的延迟、Python 的开销，以及 {ranks} 个 rank "
              "抢 {cores} 个 CPU 核造成的等待都和计算一样长，它们都算进了空闲；公式只数调度本身造成的空等。"
              "在 GPU 上计算远比这些开销长，实测会接近公式",
        "en": "one forward of this small model takes a fraction of a millisecond, and the "
              "send/recv latency, Python's overhead and the waiting of {ranks} ranks competing "
              "for {cores} CPU cores take as long as the compute; all of them count as idle, "
              "while the formula counts only the waiting the schedule itself causes. On GPUs the "
              "compute is far longer than these overheads, and the measurement comes close to "
              "the formula",
    },
    "why_fixed_overruns": {
        "zh": "有 {overruns} 个动作的真实计算超过了规定时长（机器很忙），超出的部分把时间线拉长了"
              "（依赖它的 rank 多等，空闲偏高；超时的 rank 自己多忙，空闲偏低）",
        "en": "the real compute of {overruns} actions took longer than their stated duration "
              "(the machine is busy), and the excess stretched the timeline (the ranks that "
              "depend on them wait longer, idle share too high; the overrunning ranks are busy "
              "longer, idle share too low)",
    },
    "why_fixed_no_overruns": {
        "zh": "而且没有动作超时：这台机器的睡眠唤醒与进程调度延迟混进了时间线（机器负载重时会这样），"
              "重新运行通常更接近",
        "en": "no action overran, yet this machine's wake-up and process-scheduling delays "
              "got into the timeline (as happens when the machine is heavily loaded); running "
              "it again usually comes closer",
    },

    # --- interpret_zero_bubble_real --------------------------------------------------------------
    "zb_real_head": {
        "zh": "真实计算下的平均空闲占比：{shares}（公式依次为 {formulas}）",
        "en": "mean idle share in real compute: {shares} (formulas, in the same order: {formulas})",
    },
    "zb_real_in_order": {
        "zh": "结论：三者的先后与公式相同，但都远高于公式：{why}。",
        "en": "Conclusion: the three come in the formulas' order, but all far above them: {why}.",
    },
    "zb_real_overheads": {
        "zh": "send/recv 的延迟和 Python 的开销",
        "en": "the send/recv latency and Python's overhead",
    },
    "zb_real_overheads_crowded": {
        "zh": "send/recv 的延迟、Python 的开销，以及 {ranks} 个 rank 抢 {cores} 个 CPU 核的等待",
        "en": "the send/recv latency, Python's overhead and the wait of {ranks} ranks for "
              "{cores} CPU cores",
    },
    "zb_real_inverted": {
        "zh": "结论：这里 {more}（{more_share:.1%}）比 {less}（{less_share:.1%}）空闲得多，与公式的"
              "先后相反。公式只数调度本身的空等；而小模型的一次前向只要零点几毫秒，每个动作、每条消息"
              "都带着一份与计算一样长的固定开销（{overheads}），都算进了空闲。拆开反向的调度这两样都"
              "更多：ZB-H1 与 ZB-V 把每个反向拆成 B 和 W（本节的 W 还要把 stage 的图再走一遍）；ZB-V "
              "再把每个 stage 切成两个 chunk，动作数翻倍、每个只有一半长，每个方向有 2(p−1) 条 stage "
              "边界的消息，是 1F1B 的两倍。在 GPU 上计算远比这些开销长，先后会回到公式的先后"
              "（上面固定时长模式的实测就是这样）。",
        "en": "Conclusion: here {more} ({more_share:.1%}) idles more than {less} "
              "({less_share:.1%}), the reverse of the formulas' order. The formulas count only "
              "the schedule's own waiting; but one forward of this small model takes a fraction "
              "of a millisecond, and every action and every message carries a fixed overhead as "
              "long as the compute ({overheads}), all counted as idle. The schedules that split "
              "the backward have more of both: ZB-H1 and ZB-V split every backward into B and W "
              "(and this section's W walks the stage's graph again); ZB-V also cuts every stage "
              "into two chunks, twice the actions, each half as long, with 2(p−1) stage-boundary "
              "messages each way, twice 1F1B's. On GPUs the compute is far longer than these "
              "overheads and the order returns to the formulas' (as the fixed-time measurement "
              "above shows).",
    },

    # --- interpret_bubble ----------------------------------------------------------------------
    "bubble_head": {
        "zh": "实测空闲占比 {mean:.1%}，公式 {formula:.1%}",
        "en": "measured idle share {mean:.1%}, formula {formula:.1%}",
    },
    "bubble_fixed_agree": {
        "zh": "结论：{head}：一致（差 {diff}），时间线上只剩调度本身。",
        "en": "Conclusion: {head}: they agree (off by {diff}), the timeline shows the schedule "
              "alone.",
    },
    "bubble_fixed_agree_overruns": {
        "zh": "结论：{head}：一致（差 {diff}），时间线上只剩调度本身"
              "（有 {overruns} 个动作超时，影响在 {tolerance:.0%} 的容差之内）。",
        "en": "Conclusion: {head}: they agree (off by {diff}), the timeline shows the schedule "
              "alone ({overruns} actions overran, with an effect within the {tolerance:.0%} "
              "tolerance).",
    },
    "bubble_real_agree": {
        "zh": "结论：{head}：真实计算模式下也一致（差 {diff}），这台机器上每个动作的计算"
              "远比通信与调度开销长，就像 GPU 上的大模型那样。",
        "en": "Conclusion: {head}: they agree in real-compute mode too (off by {diff}): on this "
              "machine each action's compute is far longer than the communication and "
              "scheduling overheads, as for a large model on GPUs.",
    },
    "bubble_fixed_high": {
        "zh": "结论：{head}，实测高了 {diff}：{why}。",
        "en": "Conclusion: {head}, the measurement is {diff} higher: {why}.",
    },
    "bubble_fixed_low": {
        "zh": "结论：{head}，实测低了 {diff}：{why}。",
        "en": "Conclusion: {head}, the measurement is {diff} lower: {why}.",
    },
    "bubble_real_high": {
        "zh": "结论：{head}，真实计算模式下实测高了 {diff}：{why}。",
        "en": "Conclusion: {head}, in real-compute mode the measurement is {diff} higher: {why}.",
    },
    "bubble_real_low": {
        "zh": "结论：{head}，真实计算模式下实测低了 {diff}：公式假设每个动作一样长，这次各动作的"
              "长短差别很大（抢核），有的 rank 恰好一直有活干。",
        "en": "Conclusion: {head}, in real-compute mode the measurement is {diff} lower: the "
              "formula assumes every action takes as long as the others, and this time they "
              "differed a lot (competing for cores), so some ranks happened to have work all "
              "along.",
    },

    # --- interpret_schedules -------------------------------------------------------------------
    "schedule_step": {
        "zh": "{name} {ms:.0f} ms",
        "en": "{name} {ms:.0f} ms",
    },
    "schedule_share": {
        "zh": "{name} {share:.1%}",
        "en": "{name} {share:.1%}",
    },
    "schedules_head": {
        "zh": "一步用时 {steps}；平均空闲占比 {shares}，公式 {formula:.1%}。",
        "en": "Step time {steps}; mean idle share {shares}, formula {formula:.1%}.",
    },
    "schedules_same": {
        "zh": "结论：两种调度一样长、空闲一样多，都等于公式：1F1B 没有缩小气泡，"
              "它改变的是同时在途的激活值（下面）。",
        "en": "Conclusion: both schedules take as long and idle as much, both as the formula "
              "says: 1F1B does not shrink the bubble, it changes the activations in flight at "
              "once (below).",
    },
    "schedules_differ": {
        "zh": "结论：这次实测的两种调度不一样长或空闲不同，这是这台机器的原因，不是调度的："
              "{why}。上面模拟的时间线（没有噪声）里两者完全相同。",
        "en": "Conclusion: this time the two measured schedules differ in length or idle share; "
              "that is this machine's doing, not the schedules': {why}. In the simulated "
              "timelines above (no noise) the two are identical.",
    },
    "schedules_off_formula": {
        "zh": "结论：这次实测的两种调度偏离了公式，这是这台机器的原因，不是调度的："
              "{why}。上面模拟的时间线（没有噪声）里两者完全相同。",
        "en": "Conclusion: this time the two measured schedules are off the formula; that is "
              "this machine's doing, not the schedules': {why}. In the simulated timelines "
              "above (no noise) the two are identical.",
    },

    # --- interpret_bubble_sweep ----------------------------------------------------------------
    "sweep_head_higher": {
        "zh": "m ≥ p 的 {n} 个点：实测平均比公式高 {avg}，偏差最大的是 p={p}、m={m}"
              "（{worst:+.1f} 个百分点）。",
        "en": "The {n} points with m ≥ p: measured on average {avg} higher than the formula, "
              "the largest deviation at p={p}, m={m} ({worst:+.1f} percentage points).",
    },
    "sweep_head_lower": {
        "zh": "m ≥ p 的 {n} 个点：实测平均比公式低 {avg}，偏差最大的是 p={p}、m={m}"
              "（{worst:+.1f} 个百分点）。",
        "en": "The {n} points with m ≥ p: measured on average {avg} lower than the formula, "
              "the largest deviation at p={p}, m={m} ({worst:+.1f} percentage points).",
    },
    "sweep_on_curve_fixed": {
        "zh": "结论：固定时长模式下实测点落在公式曲线上。",
        "en": "Conclusion: in fixed-time mode the measured points lie on the formula's curve.",
    },
    "sweep_on_curve_real": {
        "zh": "结论：真实计算模式下也实测点落在公式曲线上。",
        "en": "Conclusion: in real-compute mode too the measured points lie on the formula's "
              "curve.",
    },
    "sweep_fixed_off": {
        "zh": "结论：固定时长模式下本应落在曲线上，这次偏离了：{why}。",
        "en": "Conclusion: in fixed-time mode the points should lie on the curve, and this time "
              "they are off: {why}.",
    },
    "sweep_real_off": {
        "zh": "结论：真实计算模式下点偏离公式曲线，而且 m 越大、每个动作越短，偏得越明显：{why}。",
        "en": "Conclusion: in real-compute mode the points are off the formula's curve, the more "
              "so the larger m and the shorter each action: {why}.",
    },

    # --- interpret_interleaving ----------------------------------------------------------------
    "inter_head": {
        "zh": "各 rank 平均空闲占比：1F1B 实测 {a:.1%}（公式 {f1:.1%}），"
              "交错式 v={v} 实测 {b:.1%}（公式 {fv:.1%}）；一步用时 {plain_ms:.0f} ms → {inter_ms:.0f} ms。",
        "en": "Mean idle share of the ranks: 1F1B measured {a:.1%} (formula {f1:.1%}), "
              "interleaved v={v} measured {b:.1%} (formula {fv:.1%}); step time {plain_ms:.0f} ms → {inter_ms:.0f} ms.",
    },
    "inter_bubble_time": {
        "zh": "气泡时间（各 rank 平均空闲 × 一步）：{plain_ms:.0f} ms → {inter_ms:.0f} ms，"
              "公式 (p−1)·(t_F+t_B) = {formula_plain_ms:.0f} ms → 1/{v} 即 {formula_inter_ms:.0f} ms；"
              "缩小为 1/v 的是气泡时间，占比按 (p−1)/(v·m+p−1) 下降。",
        "en": " Bubble time (mean idle share of the ranks × step): {plain_ms:.0f} ms → "
              "{inter_ms:.0f} ms, formula (p−1)·(t_F+t_B) = {formula_plain_ms:.0f} ms → 1/{v} "
              "of it, {formula_inter_ms:.0f} ms; it is the bubble time that shrinks to 1/v, the "
              "share falls as (p−1)/(v·m+p−1).",
    },
    "idle_out_of_bounds": {
        "zh": "结论：这次的测量是噪声，不能下结论。空闲占比 {shares} 超出了 0～100%：空闲不可能为负，"
              "也不可能比整步还长，说明各 rank 的计时被打乱了（机器上还有别的程序在抢 CPU）。"
              "请在机器空闲时重新运行上面的测量单元格和这个单元格。",
        "en": "Conclusion: this measurement is noise and supports no conclusion. The idle shares "
              "{shares} fall outside 0-100 %: idle time cannot be negative or longer than the "
              "step, so the ranks' timing was scrambled (other programs compete for the CPU). "
              "Rerun the measuring cell above and this cell when the machine is idle.",
    },
    "step_below_compute": {
        "zh": "结论：这次的测量是噪声，不能下结论。一步只用了 {step_ms:.0f} ms，比它自己的计算"
              "（{least_ms:.0f} ms）还短，这不可能。请在机器空闲时重新运行上面的测量单元格和这个单元格。",
        "en": "Conclusion: this measurement is noise and supports no conclusion. A step took "
              "{step_ms:.0f} ms, shorter than its own compute ({least_ms:.0f} ms), which cannot "
              "happen. Rerun the measuring cell above and this cell when the machine is idle.",
    },
    "inter_gain": {
        "zh": "结论：交错把空闲从 {a:.1%} 降到 {b:.1%}，一步也变短了，与公式一致。",
        "en": "Conclusion: interleaving cut the idle share from {a:.1%} to {b:.1%} and the step "
              "got shorter, as the formula says.",
    },
    "inter_gain_biased": {
        "zh": "结论：交错把空闲从 {a:.1%} 降到 {b:.1%}，一步也变短了；数值与公式有偏差：{why}。",
        "en": "Conclusion: interleaving cut the idle share from {a:.1%} to {b:.1%} and the step "
              "got shorter; the numbers are off the formula: {why}.",
    },
    "inter_none": {
        "zh": "结论：这次没有测到交错的收益，与公式（{f1:.1%} → {fv:.1%}）不符：这是这台机器的原因：{why}。",
        "en": "Conclusion: this time no gain from interleaving was measured, unlike the formula "
              "({f1:.1%} → {fv:.1%}); that is this machine's doing: {why}.",
    },

    # --- interpret_stages ----------------------------------------------------------------------
    "stages_head": {
        "zh": "m={m} 时，p = {ps} 的实测空闲 {measured}，公式 {formula}。",
        "en": "At m={m}, measured idle share for p = {ps}: {measured}, formula {formula}.",
    },
    "stages_rising": {
        "zh": "结论：stage 越多，气泡越大，与公式的趋势一致。",
        "en": "Conclusion: the more stages, the larger the bubble, the trend of the formula.",
    },
    "stages_rising_off": {
        "zh": "结论：stage 越多，气泡越大，与公式的趋势一致；个别点偏离公式 {off}：{why}。",
        "en": "Conclusion: the more stages, the larger the bubble, the trend of the formula; a "
              "few points are off the formula by {off}: {why}.",
    },
    "stages_flat": {
        "zh": "结论：这次实测没有随 p 单调上升，与公式不符：{why}。",
        "en": "Conclusion: this time the measurement does not rise steadily with p, unlike the "
              "formula: {why}.",
    },

    # --- interpret_microbatch ------------------------------------------------------------------
    "mb_best": {
        "zh": "吞吐最高的是 micro-batch = {b}（m = {m}，{throughput:.0f} tokens/s）。",
        "en": "The highest throughput is at micro-batch = {b} (m = {m}, {throughput:.0f} "
              "tokens/s).",
    },
    "mb_memory_linear": {
        "zh": "显存：rank 0 的峰值激活值与它同时持有的序列数 min(p, m)·b 成正比（每条序列约 {kib:.0f} KiB）。",
        "en": "Memory: rank 0's peak activations are proportional to the sequences it holds at "
              "once, min(p, m)·b (about {kib:.0f} KiB per sequence).",
    },
    "mb_memory_not_linear": {
        "zh": "显存：峰值激活值没有与 min(p, m)·b 成正比（测量受分配器影响）。",
        "en": "Memory: the peak activations are not proportional to min(p, m)·b (the "
              "measurement is affected by the allocator).",
    },
    "mb_largest": {
        "zh": "结论：这台机器上最大的 micro-batch 最快，尽管 m = {m} 时气泡占 {bubble:.0%}："
              "每次计算的固定开销比气泡更要紧。",
        "en": "Conclusion: on this machine the largest micro-batch is the fastest, although at "
              "m = {m} the bubble takes {bubble:.0%}: the fixed overhead of each compute matters "
              "more than the bubble.",
    },
    "mb_smallest": {
        "zh": "结论：这台机器上最小的 micro-batch 最快：气泡最小，而小计算的固定开销在这里不显著。",
        "en": "Conclusion: on this machine the smallest micro-batch is the fastest: the bubble "
              "is smallest, and the fixed overhead of small computes is not significant here.",
    },
    "mb_middle": {
        "zh": "结论：最优值在中间。更大的 micro-batch 意味着更少的 micro-batch（m = {batch}/b），"
              "气泡 (p−1)/(m+p−1) 变大（b = {largest} 时 m = {m}，气泡 {bubble:.0%}）；"
              "更小的 micro-batch 让每次计算太小，Python、算子启动和 send/recv 的固定开销占了主导。",
        "en": "Conclusion: the best value is in the middle. Larger micro-batches mean fewer "
              "micro-batches (m = {batch}/b) and a larger bubble (p−1)/(m+p−1) (at b = "
              "{largest}, m = {m}, bubble {bubble:.0%}); smaller micro-batches make each compute "
              "too small, and the fixed overheads of Python, kernel launches and send/recv "
              "dominate.",
    },
    "mb_measure": {
        "zh": "最优的 micro-batch 大小取决于模型和机器，要实测，不能只按\"显存允许的最大值\"来选。",
        "en": "The best micro-batch size depends on the model and the machine: measure it, do "
              "not just pick \"the largest that fits in memory\".",
    },

    # --- interpret_balance ---------------------------------------------------------------------
    "balance_head": {
        "zh": "实测：{even} {even_ms:.0f} ms，{balanced} {balanced_ms:.0f} ms，后者快 {got:.2f}×；"
              "模拟器按同样的时长预测 {want:.2f}×。",
        "en": "Measured: {even} {even_ms:.0f} ms, {balanced} {balanced_ms:.0f} ms, the latter "
              "{got:.2f}× faster; the simulator predicts {want:.2f}× from the same durations.",
    },
    "balance_agree": {
        "zh": "结论：按成本平衡后一步变快了：最慢的 stage 决定整条流水线的节拍，与模拟一致。",
        "en": "Conclusion: balancing by cost made the step faster: the slowest stage sets the "
              "pace of the whole pipeline, as simulated.",
    },
    "balance_machine": {
        "zh": "结论：按成本平衡后一步变快了：最慢的 stage 决定整条流水线的节拍；与模拟的差别来自这台机器：{why}。",
        "en": "Conclusion: balancing by cost made the step faster: the slowest stage sets the "
              "pace of the whole pipeline; the difference from the simulation is this "
              "machine's: {why}.",
    },
    "balance_none": {
        "zh": "结论：这次没有测到平衡切分的收益，与模拟（{want:.2f}×）不符：{why}。",
        "en": "Conclusion: this time no gain from the balanced split was measured, unlike the "
              "simulation ({want:.2f}×): {why}.",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # an item of a list of schedules: the schedule's name and its number
    "schedule_step", "schedule_share",
})
