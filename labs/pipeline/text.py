"""Messages of labs.pipeline (notebook 2.3): schedule and split errors, the experiments' bad
input and the figures. The readings (``interpret_*``) are in :mod:`labs.pipeline.text_readings`.

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- words and separators ------------------------------------------------------------------
    "points": {
        "zh": "{value:.1f} 个百分点",
        "en": "{value:.1f} percentage points",
    },

    # --- bad input: split, micro-batches, schedules (partition, schedules, executor) -----------
    "too_many_stages": {
        "zh": "无法把 {n_layers} 层切成 {n_stages} 个 stage：每个 stage 至少要有一层。"
              "请最多用 {n_layers} 个 stage（或 n_stages / n_chunks），或者换一个更深的模型。",
        "en": "cannot split {n_layers} layers into {n_stages} stages: every stage needs at least "
              "one layer. Use at most {n_layers} stages (or n_stages / n_chunks), or a deeper "
              "model.",
    },
    "microbatches_split": {
        "zh": "{batch_size} 行的 batch 无法平均切成 {m} 个 micro-batch；请从 {divisors} 中选 "
              "n_microbatches，或让 batch 大小是 {m} 的倍数",
        "en": "a batch of {batch_size} rows cannot be split into {m} equal micro-batches; use "
              "n_microbatches among {divisors} or a batch size that is a multiple of {m}",
    },
    "interleaved_multiple": {
        "zh": "交错式 1F1B 让 micro-batch 以 p={p} 个为一组依次经过各个 chunk："
              "n_microbatches={m} 必须是 {p} 的倍数",
        "en": "interleaved 1F1B sends micro-batches through the chunks in groups of p={p}: "
              "n_microbatches={m} must be a multiple of {p}",
    },
    "unknown_schedule": {
        "zh": "未知的调度 {name!r}；请用其中之一：{schedules}",
        "en": "schedule {name!r} is unknown; use one of {schedules}",
    },
    "torch_schedule_given": {
        "zh": "{shown} 是 torch 的调度（torch.distributed.pipelining 的执行器），本课程的执行器要的是"
              "调度的名字（{schedules} 之一，例如 '1f1b'）或每个 rank 一张动作表；要运行 torch 自己的"
              "调度，用同样的名字调用 labs.pipeline.step.torch_pipeline_step",
        "en": "{shown} is torch's schedule (an executor of torch.distributed.pipelining); the "
              "course's executor takes a schedule's name (one of {schedules}, e.g. '1f1b') or a "
              "table of actions per rank; to run torch's own, call "
              "labs.pipeline.step.torch_pipeline_step with the same name",
    },
    "one_chunk": {
        "zh": "{name} 每个 rank 只有一个 chunk；n_chunks={n_chunks} 需要 'interleaved'",
        "en": "{name} runs one chunk per rank; n_chunks={n_chunks} needs 'interleaved'",
    },
    "schedule_ranks": {
        "zh": "调度有 {n} 个 rank，但进程组有 {p} 个",
        "en": "the schedule has {n} ranks but the group has {p}",
    },

    # --- a schedule that cannot run (simulator) ------------------------------------------------
    "computes_nothing": {
        "zh": "调度里没有任何计算动作",
        "en": "the schedule computes nothing",
    },
    "unknown_kind": {
        "zh": "rank {r}：未知的动作类型 {kind!r}；请用其中之一：{kinds}",
        "en": "rank {r}: unknown action kind {kind!r}; use one of {kinds}",
    },
    "wrong_rank": {
        "zh": "stage {stage} 的 {action} 排在 rank {r} 上，但 stage {stage} 在 rank {owner} 上",
        "en": "{action} of stage {stage} is on rank {r}, but stage {stage} lives on rank {owner}",
    },
    "twice": {
        "zh": "stage {stage} 的 {action} 在 rank {r} 上出现了两次",
        "en": "{action} of stage {stage} appears twice on rank {r}",
    },
    "action_of_stage": {
        "zh": "stage {stage} 的 {action}",
        "en": "{action} of stage {stage}",
    },
    "never_runs": {
        "zh": "调度从不运行 {missing}",
        "en": "the schedule never runs {missing}",
    },
    "never_runs_more": {
        "zh": "调度从不运行 {missing}（还有 {more} 个）",
        "en": "the schedule never runs {missing} (and {more} more)",
    },
    "send_wrong_peer": {
        "zh": "rank {r}：{action} 发往 rank {peer}，但 stage {consumer} 在 rank {owner} 上",
        "en": "rank {r}: {action} goes to rank {peer}, but stage {consumer} lives on rank {owner}",
    },
    "send_before_compute": {
        "zh": "rank {r}：{action} 在算出 stage {stage} 的 {kind}{mb} 之前就发送它的结果",
        "en": "rank {r}: {action} sends the result of {kind}{mb} of stage {stage} before "
              "computing it",
    },
    "sent_twice": {
        "zh": "rank {r}：{action} 被发送了两次",
        "en": "rank {r}: {action} is sent twice",
    },
    # what an action needs before it runs: the activation (F) or the gradient (B) of a
    # neighbouring stage, computed on this rank or received from another
    "needs_activation_computed": {
        "zh": "rank {r}：stage {stage} 的 {action} 需要 stage {src} 的 {kind}{mb} 的激活值：请先计算它",
        "en": "rank {r}: {action} of stage {stage} needs the activation of {kind}{mb} of stage "
              "{src}: compute it first",
    },
    "needs_activation_received": {
        "zh": "rank {r}：stage {stage} 的 {action} 需要 stage {src} 的 {kind}{mb} 的激活值：请先接收它"
              "（RECV_{kind}）",
        "en": "rank {r}: {action} of stage {stage} needs the activation of {kind}{mb} of stage "
              "{src}: receive it (RECV_{kind}) first",
    },
    "needs_gradient_computed": {
        "zh": "rank {r}：stage {stage} 的 {action} 需要 stage {src} 的 {kind}{mb} 的梯度：请先计算它",
        "en": "rank {r}: {action} of stage {stage} needs the gradient of {kind}{mb} of stage "
              "{src}: compute it first",
    },
    "needs_gradient_received": {
        "zh": "rank {r}：stage {stage} 的 {action} 需要 stage {src} 的 {kind}{mb} 的梯度：请先接收它"
              "（RECV_{kind}）",
        "en": "rank {r}: {action} of stage {stage} needs the gradient of {kind}{mb} of stage "
              "{src}: receive it (RECV_{kind}) first",
    },
    "before_forward": {
        "zh": "rank {r}：stage {stage} 的 {action} 排在它的前向之前",
        "en": "rank {r}: {action} of stage {stage} comes before its forward",
    },
    "zb_v_equal_times": {
        "zh": "ZB-V 的公式只适用于 t_F = t_B = t_W（这里是 {t_f}、{t_b}、{t_w}）；其他时长请模拟这张表",
        "en": "ZB-V's formula holds for t_F = t_B = t_W only (here {t_f}, {t_b}, {t_w}); "
              "simulate the schedule for other times",
    },
    "weight_before_input": {
        "zh": "rank {r}：stage {stage} 的 {action} 排在它的 B（输入梯度）之前",
        "en": "rank {r}: {action} of stage {stage} comes before its B (input gradient)",
    },
    "waits_at": {
        "zh": "rank {r} 停在 {action}（第 {pos} 个动作，从 0 数起）",
        "en": "rank {r} waits at {action} (action {pos})",
    },
    "deadlock": {
        "zh": "调度会死锁（deadlock）：{waits}。这些 rank 等待的消息，没有任何 rank 能发出。",
        "en": "the schedule deadlocks: {waits}. No rank can send what these ranks wait for.",
    },
    "never_received": {
        "zh": "stage {stage} 的 {kind}{mb} 的结果发往 rank {peer}，但那里从未接收",
        "en": "the result of {kind}{mb} of stage {stage} is sent to rank {peer} but never "
              "received there",
    },

    # --- experiments: bad input and the comparison ---------------------------------------------
    "bounds_mismatch": {
        "zh": "bounds 有 {n} 个 stage，但 {n_ranks} 个 rank × {n_chunks} 个 chunk 需要 {n_stages} 个",
        "en": "bounds has {n} stages but {n_ranks} ranks x {n_chunks} chunks need {n_stages}",
    },
    "dp_split": {
        "zh": "batch_size={batch_size} 无法切成 {dp} 份数据并行的切片、每份 {m} 个 micro-batch："
              "请让它是 {multiple} 的倍数",
        "en": "batch_size={batch_size} cannot be split into {dp} data-parallel slices of {m} "
              "micro-batches: make it a multiple of {multiple}",
    },
    "torch_compare": {
        "zh": "与 torch 的比较只支持 {schedules}，且每个 rank 一个 chunk",
        "en": "torch comparison covers {schedules} with one chunk per rank",
    },
    "vocab_too_small": {
        "zh": "配置的词表比语料的词表小",
        "en": "the config's vocabulary is smaller than the corpus's",
    },
    "compare_loss": {
        "zh": "loss",
        "en": "loss",
    },
    "compare_missing_grads": {
        "zh": "不是每个参数都得到了梯度",
        "en": "not every parameter got a gradient",
    },
    "compare_weight": {
        "zh": "这一步之后的权重 {name}",
        "en": "weight {name} after the step",
    },

    # --- figures (plots, and the mode a timeline's title names) --------------------------------
    "fig_fixed_time_mode": {
        "zh": "固定时长模式（每个 stage：F={forward} ms，B={backward} ms）",
        "en": "fixed-time mode (F={forward} ms, B={backward} ms per stage)",
    },
    "fig_fixed_time_mode_split": {
        "zh": "固定时长模式（每个 stage：F={forward} ms，B={backward} ms，W={weight} ms）",
        "en": "fixed-time mode (F={forward} ms, B={backward} ms, W={weight} ms per stage)",
    },
    "fig_bubble_title": {
        "zh": "流水线气泡：实测与理论",
        "en": "pipeline bubble vs theory",
    },
    "fig_formula": {
        "zh": "公式 (p-1)/(m+p-1)，p={p}",
        "en": "formula (p-1)/(m+p-1), p={p}",
    },
    "fig_formula_interleaved": {
        "zh": "公式 (p-1)/(v·m+p-1)，p={p}",
        "en": "formula (p-1)/(v·m+p-1), p={p}",
    },
    "fig_measured_p": {
        "zh": "实测，p={p}",
        "en": "measured, p={p}",
    },
    "fig_microbatches": {
        "zh": "micro-batch 数 m",
        "en": "micro-batches m",
    },
    "fig_idle_share": {
        "zh": "空闲占一步的比例",
        "en": "idle share of the step",
    },
    "fig_peak_in_flight": {
        "zh": "在途 micro-batch 数的峰值",
        "en": "peak in-flight micro-batches",
    },
    "fig_memory_title": {
        "zh": "每个 rank 持有的激活值",
        "en": "activations held per rank",
    },
    "fig_measured": {
        "zh": "实测",
        "en": "measured",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "compare_loss",  # numerics.assert_close's msg: the label in front of "{msg}: {why}"
    "fig_measured_p", "fig_microbatches", "fig_measured",  # legend entries, an axis label
})
