"""Messages of labs.collectives: the reading of a bandwidth sweep (notebook 2.0) and bad input.

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (it is data, loaded by
labs.messages) or format, print or decide."""

MESSAGES = {
    # --- bad input ---------------------------------------------------------------------------
    "not_contiguous": {
        "zh": "这些集合通信在连续（contiguous）张量上原地计算：请传入 tensor.contiguous()"
              "（之后也使用这个张量）。",
        "en": "these collectives work in place on a contiguous tensor: pass tensor.contiguous() "
              "(and use that tensor afterwards).",
    },
    "fit_needs_two_sizes": {
        "zh": "至少需要两个消息大小，每个大小对应一个用时",
        "en": "need a time for each of at least two sizes",
    },
    "ratio_not_positive": {
        "zh": "ratio={ratio} 必须是一个有限的正数",
        "en": "ratio={ratio} must be a positive finite number",
    },
    # --- orders of magnitude -----------------------------------------------------------------
    "under_one_order": {
        "zh": "不到一个数量级",
        "en": "less than one order of magnitude",
    },
    "orders_between": {
        "zh": "{low}到{high}个数量级",
        "en": "{low} to {high} orders of magnitude",
    },
    "numerals": {  # one to ten, separated by spaces (zh: 两个数量级, not 二个)
        "zh": "一 两 三 四 五 六 七 八 九 十",
        "en": "one two three four five six seven eight nine ten",
    },
    # --- one window of a sweep ---------------------------------------------------------------
    "window_bandwidth_bound": {
        "zh": "{start} → {end}：大小 ×{k:.0f}，用时 ×{r:.1f}，接近 ×{k:.0f}：从 {start} 起已是带宽受限。",
        "en": "{start} → {end}: size ×{k:.0f}, time ×{r:.1f}, close to ×{k:.0f}: bandwidth-bound "
              "from {start} on.",
    },
    "window_latency_bound": {
        "zh": "{start} → {end}：大小 ×{k:.0f}，用时 ×{r:.1f}，远小于 ×{k:.0f}：整段都在转折点以下，"
              "{start} 的用时里约 {fixed:.0%} 是固定开销，这一段是延迟受限。",
        "en": "{start} → {end}: size ×{k:.0f}, time ×{r:.1f}, far below ×{k:.0f}: the whole window "
              "lies below the crossover, about {fixed:.0%} of the time at {start} is fixed cost; "
              "this window is latency-bound.",
    },
    "window_transition": {
        "zh": "{start} → {end}：大小 ×{k:.0f}，用时 ×{r:.1f}，小于 ×{k:.0f}：起点 {start} {where}，"
              "按 α-β 估算它的用时里约 {fixed:.0%} 是固定开销，这一段从延迟受限过渡到带宽受限。",
        "en": "{start} → {end}: size ×{k:.0f}, time ×{r:.1f}, below ×{k:.0f}: the start {start} is "
              "{where}; by the α-β model about {fixed:.0%} of its time is fixed cost, and this "
              "window goes over from latency-bound to bandwidth-bound.",
    },
    "still_below_crossover": {
        "zh": "还在转折点以下",
        "en": "still below the crossover",
    },
    "just_past_crossover": {
        "zh": "刚过转折点",
        "en": "just past the crossover",
    },
    "window_disturbed": {
        "zh": "（α-β 模型预计 ×{predicted:.1f}，实测差得较多：这一段的测量受到了干扰，"
              "比如别的程序在抢核，可以再运行一次。）",
        "en": " (the α-β model predicts ×{predicted:.1f}, the measurement is far off: this window "
              "was disturbed, e.g. by other programs taking the cores; run it again.)",
    },
    # --- a whole sweep -----------------------------------------------------------------------
    "sweep_line": {
        "zh": "{name}：α ≈ {alpha}（每次调用、即一次完整 all-reduce 的固定开销：最小的几个消息 "
              "{first}–{last_small} 中最短的用时）；β ≈ ({size} − {first}) / ({t_max} − α) = "
              "{beta:.3f} GB/s（算法带宽 S/t 的斜率）；{size} 时的总线带宽 {busbw:.2f} GB/s；"
              "α 与 S/β 相等的消息大小 α·β ≈ {crossover}。",
        "en": "{name}: α ≈ {alpha} (the fixed cost per call, i.e. per whole all-reduce: the "
              "shortest time among the smallest messages {first}–{last_small}); β ≈ ({size} − "
              "{first}) / ({t_max} − α) = {beta:.3f} GB/s (the slope, algorithm bandwidth S/t); "
              "bus bandwidth {busbw:.2f} GB/s at {size}; the message size at which α equals S/β "
              "is α·β ≈ {crossover}.",
    },
    "sweep_line_no_bandwidth": {
        "zh": "{name}：α ≈ {alpha}（每次调用、即一次完整 all-reduce 的固定开销：最小的几个消息 "
              "{first}–{last_small} 中最短的用时），{size} 时的总线带宽 {busbw:.2f} GB/s；"
              "用时没有随大小增长，测不出带宽。",
        "en": "{name}: α ≈ {alpha} (the fixed cost per call, i.e. per whole all-reduce: the "
              "shortest time among the smallest messages {first}–{last_small}), bus bandwidth "
              "{busbw:.2f} GB/s at {size}; the time did not grow with the size, so no bandwidth "
              "can be measured.",
    },
    "latency_falling": {
        "zh": "注意：{first} 用时 {t_first}，到 {at} 反而降到 {t_at}。消息变大、用时却变短，α-β "
              "模型里不可能出现：这是噪声（多半是开始时别的程序在抢核）。α 只从最小的几个消息估计；"
              "请在机器空闲时重跑上面的测量单元格再读结论。",
        "en": "Note: {first} took {t_first}, yet {at} took only {t_at}. A larger message taking "
              "less time is impossible in the α-β model: this is noise (most likely other programs "
              "taking the cores at the start). α is read from the smallest messages only; rerun the "
              "measuring cell above when the machine is idle before reading the conclusion.",
    },
    "conclusion_no_bandwidth_region": {
        "zh": "结论：这台机器上直到 {size} 用时都以固定开销为主，没有测到带宽受限的一段，"
              "与通常的图景不符：多半是机器太忙（别的程序在抢核），请在空闲时重跑。",
        "en": "Conclusion: on this machine the time is mostly fixed cost up to {size}; no "
              "bandwidth-bound region was measured, which disagrees with the usual picture: most "
              "likely the machine was too busy (other programs taking the cores); run it again "
              "when it is idle.",
    },
    "conclusion_one_latency_bound": {
        "zh": "结论：在这台机器上，约 {size} 以下是延迟受限，以上才是带宽受限"
              "（至少对其中一种实现；另一种到最大的消息仍以固定开销为主）。",
        "en": "Conclusion: on this machine, messages below about {size} are latency-bound and "
              "only larger ones bandwidth-bound (for one of the implementations at least; the "
              "other is still mostly fixed cost at the largest message).",
    },
    "conclusion_crossover": {
        "zh": "结论：在这台机器上，约 {size} 以下是延迟受限，以上才是带宽受限。",
        "en": "Conclusion: on this machine, messages below about {size} are latency-bound and "
              "only larger ones bandwidth-bound.",
    },
    "conclusion_crossover_range": {  # the two implementations cross over at different sizes
        "zh": "结论：在这台机器上，约 {low} 到 {high} 以下是延迟受限，以上才是带宽受限。",
        "en": "Conclusion: on this machine, messages below a size between {low} and {high} are "
              "latency-bound and only larger ones bandwidth-bound.",
    },
    "why_here_crowded": {
        "zh": "为什么在这里：{world_size} 个 rank 共用 {cores} 个 CPU 核，经本机回环网络通信，"
              "每一步都要等操作系统把进程调度上来，所以固定开销 α 很大，转折点也被推向大消息。"
              "换一台机器（或 GPU 上的 nccl），α、β 和转折点的位置都会不同，但曲线仍是先平、后升。",
        "en": "Why here: {world_size} ranks share {cores} CPU cores and talk over this machine's "
              "loopback network; every step waits for the operating system to schedule the "
              "process, so the fixed cost α is large and the crossover is pushed towards large "
              "messages. On another machine (or with nccl on GPUs) α, β and the crossover all "
              "differ, but the curve still stays flat first and rises after.",
    },
    "why_elsewhere": {
        "zh": "换一台机器（或 GPU 上的 nccl），α、β 和转折点的位置都会不同，但曲线仍是先平、后升。",
        "en": "On another machine (or with nccl on GPUs) α, β and the crossover all differ, but "
              "the curve still stays flat first and rises after.",
    },
    # --- hand ring against the library -------------------------------------------------------
    "ratio_tie": {
        "zh": "两者相差不到 {tolerance:.0%}（ring / {library} = {ratio:.2f}）",
        "en": "the two differ by less than {tolerance:.0%} (ring / {library} = {ratio:.2f})",
    },
    "ratio_within_noise": {
        "zh": "ring / {library} = {ratio:.2f}，相差超过 {tolerance:.0%}，但仍在这台共享机器的测量噪声"
              "（±{noise:.0%}）之内",
        "en": "ring / {library} = {ratio:.2f}, more than {tolerance:.0%} apart but still within "
              "this shared machine's measurement noise (±{noise:.0%})",
    },
    "within_noise_rerun": {
        "zh": "同一个单元格重跑，这个比值就会在这个范围里来回变，所以这里不判断谁更快；"
              "想看清差别，请在机器空闲时重跑测量单元格。",
        "en": "Rerunning the same cell moves this ratio around inside that range, so no verdict on "
              "which is faster is drawn here; to see the difference, rerun the measuring cell when "
              "the machine is idle.",
    },
    "ratio_ring_slower": {
        "zh": "手写 ring 更慢，用时是 {library} 的 {ratio:.2f} 倍",
        "en": "the hand-written ring is slower, taking {ratio:.2f} times as long as {library}",
    },
    "ratio_ring_faster": {
        "zh": "手写 ring 反而更快，用时只有 {library} 的 {ratio:.2f}",
        "en": "the hand-written ring is faster, taking only {ratio:.2f} of the time of {library}",
    },
    "ratio_line": {
        "zh": "{size}：{words}。{reading}",
        "en": "{size}: {words}. {reading}",
    },
    "large_expected": {
        "zh": "符合预期：大消息上两者每个 rank 都发送 2(N−1)/N·S 字节（下限），用时由带宽决定。",
        "en": "As expected: on large messages both send 2(N−1)/N·S bytes per rank (the minimum), "
              "and bandwidth decides the time.",
    },
    "large_implementation": {
        "zh": "两者发送的字节数相同，差距只来自实现的细节（拷贝、线程、每一步的调用开销），不是算法的差别。",
        "en": "Both send the same bytes: the gap comes from details of the implementations "
              "(copies, threads, the cost of each step's call), not from the algorithm.",
    },
    "small_expected": {
        "zh": "符合预期：ring 要走 2(N−1) = {steps} 步，每一步都付一次固定开销，外加每步一次 Python "
              "调用；通信库可以为小消息换用步数更少的算法。",
        "en": "As expected: the ring takes 2(N−1) = {steps} steps, each paying the fixed cost once, "
              "plus one Python call per step; the library can switch to an algorithm with fewer "
              "steps for small messages.",
    },
    "crowded_cores": {
        "zh": "{world_size} 个 rank 共用 {cores} 个 CPU 核，",
        "en": "{world_size} ranks share {cores} CPU cores, and ",
    },
    "small_disagrees_tie": {
        "zh": "和通常的图景（ring 在小消息上吃亏）不符。原因在这台机器：{crowded}小消息的用时几乎全是"
              "等待进程调度的固定开销，两种实现的差别淹没在其中。这说明的是本机的固定开销，不是算法的"
              "优劣；GPU 上的 nccl 为小消息另有低延迟的算法与协议。",
        "en": "This disagrees with the usual picture (the ring loses on small messages). The reason "
              "is this machine: {crowded}the time of a small message is almost all fixed cost, "
              "waiting for the process to be scheduled, and the difference between the two "
              "implementations drowns in it. This shows this machine's fixed cost, not which "
              "algorithm is better; nccl on GPUs has low-latency algorithms and protocols for "
              "small messages.",
    },
    "small_disagrees_faster": {
        "zh": "和通常的图景（ring 在小消息上吃亏）不符。原因在这台机器：{crowded}小消息的用时几乎全是"
              "等待进程调度的固定开销；gloo 的集合通信要交给它自己的工作线程（worker thread）执行，"
              "点对点的 send/recv 则由调用它的线程直接发出，核不够用时每多一次线程切换就多等一次调度。"
              "这说明的是本机的固定开销，不是算法的优劣；GPU 上的 nccl 为小消息另有低延迟的算法与协议。",
        "en": "This disagrees with the usual picture (the ring loses on small messages). The reason "
              "is this machine: {crowded}the time of a small message is almost all fixed cost, "
              "waiting for the process to be scheduled; gloo hands its collectives to its own "
              "worker thread, while point-to-point send/recv go out directly from the calling "
              "thread, and with too few cores every extra thread switch waits for one more "
              "scheduling. This shows this machine's fixed cost, not which algorithm is better; "
              "nccl on GPUs has low-latency algorithms and protocols for small messages.",
    },
    # --- the link gap ------------------------------------------------------------------------
    "link_gap": {
        "zh": "{link} 每个方向 {link_gbps:.0f} GB/s，是本机实测 {measured_gbps:.2f} GB/s 的约 "
              "{ratio:,.0f} 倍（{orders}）",
        "en": "{link} at {link_gbps:.0f} GB/s per direction is about {ratio:,.0f} times the "
              "{measured_gbps:.2f} GB/s measured here ({orders})",
    },
}
