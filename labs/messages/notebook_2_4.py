"""What notebook 2.4 (hybrid parallelism) prints from its own code cells."""

MESSAGES = {
    # --- 1. the device mesh ------------------------------------------------------------------
    "groups_of_dim": {
        "zh": "{dim} 组：{groups}",
        "en": "{dim} groups: {groups}",
    },
    "mesh_links": {
        "zh": "{shape}，每个节点 {gpus_per_node} 块 GPU：",
        "en": "{shape}, {gpus_per_node} GPUs per node:",
    },
    "gpt3_links": {
        "zh": "GPT-3 175B，1,024 张 A100，DGX 服务器每台 8 块，(dp, pp, tp) = (8, 16, 8)：",
        "en": "GPT-3 175B on 1,024 A100 in DGX servers of 8, (dp, pp, tp) = (8, 16, 8):",
    },
    "no_traffic": {
        "zh": "（并行度 1：没有通信）",
        "en": "(degree 1: no traffic)",
    },
    "sources": {
        "zh": "出处：",
        "en": "sources:",
    },
    "nvlink_vs_infiniband": {
        "zh": "每块 A100 的 NVLink / InfiniBand：{nvlink:.0f} / {infiniband:.0f} GB/s = {ratio:.0f}×",
        "en": "NVLink / InfiniBand per A100: {nvlink:.0f} / {infiniband:.0f} GB/s = {ratio:.0f}×",
    },
    "probe_rank": {
        "zh": "rank {rank} {coords}：{groups}",
        "en": "rank {rank} {coords}: {groups}",
    },
    "probe_group": {
        "zh": "{dim} 组 {peers} 和为 {total}",
        "en": "{dim} peers {peers} sum {total}",
    },
    # --- 2. hand-written 3D = one process ----------------------------------------------------
    "rank_3d": {
        "zh": "rank {rank} {coords}：loss {loss}，核对了 {shards} 块权重分片",
        "en": "rank {rank} {coords}: loss {loss}, {shards} weight shards checked",
    },
    "single_process_loss": {
        "zh": "单进程，第 {step} 步：loss {loss:.6f}",
        "en": "single process, step {step}: loss {loss:.6f}",
    },
    "sp_losses": {
        "zh": "打开序列并行，最后一个 stage 上的 loss：{losses}",
        "en": "with sequence parallelism, losses on the last stages: {losses}",
    },
    # --- 3. torch's DeviceMesh + parallelize_module + fully_shard ----------------------------
    "torch_vs_hand": {
        "zh": "rank {rank} {coords}：torch 3D 的 loss {torch_loss:.6f}，手写版 {hand_loss:.6f}",
        "en": "rank {rank} {coords}: torch 3D loss {torch_loss:.6f}, hand-written {hand_loss:.6f}",
    },
    "torch_equal": {
        "zh": "每个 rank：{n}+ 个梯度与权重都与单进程、与手写的 3D 相同",
        "en": "every rank: {n}+ gradients and weights equal one process and the hand-written 3D",
    },
    "beyond_slack": {
        "zh": "实测 − 预测超出余量的部分：最差的 rank 上 {excess:.0f} B",
        "en": "measured - predicted beyond the stated slack: {excess:.0f} B on the worst rank",
    },
    # --- 4. context and expert parallelism ---------------------------------------------------
    "ring_rank": {
        "zh": "rank {rank}：token {tokens}，与完整注意力相比的最大 |diff|：{diffs}；发送 {sent_kib:.0f} KiB",
        "en": "rank {rank}: tokens {tokens}, max |diff| vs full attention {diffs}; "
              "sent {sent_kib:.0f} KiB",
    },
    "moe_rank": {
        "zh": "rank {rank}：专家 {experts}，发送 {sent_bytes} B；loss {loss:.6f}（单进程 {reference_loss:.6f}）",
        "en": "rank {rank}: experts {experts}, sent {sent_bytes} B; "
              "loss {loss:.6f} (one process {reference_loss:.6f})",
    },
    # --- 5. the planner ----------------------------------------------------------------------
    "plan_row": {
        "zh": "{config}：步时 {step_s:.1f} s，每卡 {memory_gib:.1f} GiB，bubble {bubble:.1%}，MFU {mfu:.1%}",
        "en": "{config}: step {step_s:.1f} s, {memory_gib:.1f} GiB per GPU, bubble {bubble:.1%}, "
              "MFU {mfu:.1%}",
    },
    "rejected": {
        "zh": "被排除的：",
        "en": "rejected:",
    },
    # --- 6. case studies: MT-NLG 530B --------------------------------------------------------
    "mtnlg_params": {
        "zh": "参数量：12·L·h² = 12 × 105 × 20480² = {core_b:.1f}B（含嵌入：{total_b:.1f}B）；"
              "每个 stage {layers_per_stage} 层",
        "en": "parameters: 12·L·h² = 12 × 105 × 20480² = {core_b:.1f}B "
              "(with embeddings: {total_b:.1f}B); {layers_per_stage} layers per stage",
    },
    "mtnlg_replica": {
        "zh": "一个副本：TP × PP = {gpus} 张 GPU = {servers} 台 DGX A100",
        "en": "one replica: TP × PP = {gpus} GPUs = {servers} DGX A100 servers",
    },
    "mtnlg_chapter_gpus": {
        "zh": "教材：8 × 35 × 192 = {chapter_gpus:,} 张 GPU；Selene 集群一共只有 560 × 8 = {selene_gpus:,} 张",
        "en": "the chapter: 8 × 35 × 192 = {chapter_gpus:,} GPUs; "
              "the Selene cluster had 560 × 8 = {selene_gpus:,}",
    },
    "mtnlg_scale": {
        "zh": "{gpus:,} 张 GPU：DP = {dp:2d}，fits={fits}，每卡 {memory_gib:.1f} GiB，"
              "估算每卡 {tflops:.0f} TFLOP/s（论文：{paper_tflops}，比值 {ratio:.2f}；两者都计入重计算）",
        "en": "{gpus:,} GPUs: DP = {dp:2d}, fits {fits}, {memory_gib:.1f} GiB per GPU, "
              "estimated {tflops:.0f} TFLOP/s per GPU (paper: {paper_tflops}, ratio {ratio:.2f}; "
              "both count recomputation)",
    },
    # --- 6. case studies: LLaMA-65B ----------------------------------------------------------
    "chapter_days": {
        "zh": "教材：128 张 GPU × 38 TFLOP/s -> {days:,.0f} 天（教材说 21 天）",
        "en": "the chapter: 128 GPUs × 38 TFLOP/s -> {days:,.0f} days (claimed: 21)",
    },
    "paper_tokens": {
        "zh": "论文：2,048 张 GPU × 380 tokens/s × 21 天 = {tokens:.3g} tokens",
        "en": "the paper: 2,048 GPUs × 380 tokens/s × 21 days = {tokens:.3g} tokens",
    },
    "paper_mfu": {
        "zh": "每卡 380 tokens/s × 6N = {tflops:.1f} TFLOP/s = A100 峰值 312 的 {mfu:.1%}（MFU）",
        "en": "380 tokens/s per GPU × 6N = {tflops:.1f} TFLOP/s = {mfu:.1%} of the A100's 312 (MFU)",
    },
    "chapter_mfu": {
        "zh": "教材的 38 TFLOP/s = {mfu:.1%} MFU",
        "en": "the chapter's 38 TFLOP/s = {mfu:.1%} MFU",
    },
    "llama_params": {
        "zh": "LLaMA-65B：{params_b:.2f}B 参数；全局 batch 2048 × 2048 = 4M tokens",
        "en": "LLaMA-65B: {params_b:.2f}B parameters; global batch 2048 × 2048 = 4M tokens",
    },
    "llama_chapter_layout": {
        "zh": "教材的 TP4/PP8/DP4，128 张 GPU：fits={fits}，每卡 {memory_gib:.1f} GiB，"
              "每卡 {tokens_per_s:.0f} tokens/s -> 训完 1.4T tokens 要 {days:,.0f} 天",
        "en": "the chapter's TP4/PP8/DP4 on 128 GPUs: fits {fits}, {memory_gib:.1f} GiB per GPU, "
              "{tokens_per_s:.0f} tokens/s per GPU -> {days:,.0f} days for 1.4T tokens",
    },
    "llama_best": {
        "zh": "2,048 张 GPU 上最好的配置（recompute={recompute!r}）：{config}：每卡 {tokens_per_s:.0f} tokens/s"
              "（论文：约 380），MFU {mfu:.0%}，{days:.0f} 天（论文：约 21 天）",
        "en": "best on 2,048 GPUs, recompute={recompute!r}: {config}: {tokens_per_s:.0f} tokens/s "
              "per GPU (paper: about 380), MFU {mfu:.0%}, {days:.0f} days (paper: about 21)",
    },
    "boundary_tensor": {
        "zh": "边界张量 b·s·h·2 B = {b} × {s} × {h} × 2 = {boundary_mb:.1f} MB；"
              "要到 2.5 GB 需要 b ≈ {batch_for_2_5_gb:.0f}",
        "en": "boundary tensor b·s·h·2 B = {b} × {s} × {h} × 2 = {boundary_mb:.1f} MB; "
              "2.5 GB needs b ≈ {batch_for_2_5_gb:.0f}",
    },
    "fp8_saving": {
        "zh": "fp16 -> fp8：{fp16_mb:.1f} MB -> {fp8_mb:.1f} MB，字节数少了 {saving:.0%}",
        "en": "fp16 -> fp8: {fp16_mb:.1f} MB -> {fp8_mb:.1f} MB, {saving:.0%} fewer bytes",
    },
    "idle_share": {
        "zh": "空闲占比 (p-1)/(m+p-1)，p={p}，m={m}：{idle:.1%}",
        "en": "idle share (p-1)/(m+p-1), p={p}, m={m}: {idle:.1%}",
    },
    "interleaved": {
        "zh": "交错式 v=2：PTD-P 的比值 (p-1)/(v·m) = {ptdp_ratio:.1%}；"
              "空闲占比 (p-1)/(v·m+p-1) = {idle:.1%}",
        "en": "interleaved v=2, PTD-P's ratio (p-1)/(v·m) = {ptdp_ratio:.1%}; "
              "idle share (p-1)/(v·m+p-1) = {idle:.1%}",
    },
    # --- 7. pitfalls: one dimension at a time ------------------------------------------------
    "path_dp_only": {"zh": "只用 DP", "en": "DP only"},
    "path_tp_in_node": {"zh": "+ 节点内的 TP", "en": "+ TP inside a node"},
    "path_pp": {"zh": "+ PP", "en": "+ PP"},
    "path_more_pp": {"zh": "+ 更多 PP", "en": "+ more PP"},
    "path_verdict": {
        "zh": "{step}：{verdict}",
        "en": "{step}: {verdict}",
    },
    "tokens_per_gpu": {
        "zh": "每卡 {tokens_per_s:.0f} tokens/s",
        "en": "{tokens_per_s:.0f} tokens/s per GPU",
    },
    "first_fit": {
        "zh": "第一个放得下的配置：{config}；之后再加维度，tokens/s 最多变化 {gain:+.1%}",
        "en": "the first layout that fits: {config}; adding dimensions after it changes tokens/s "
              "by at most {gain:+.1%}",
    },
    # --- 7. pitfalls: fragmentation ----------------------------------------------------------
    "fragmentation": {
        "zh": "空闲 {free}/100，最大的连续空闲块 {largest_free}，碎片率 1 - 最大块/空闲 = {fragmentation:.0%}；"
              "大小为 {request} 的请求放得下：{fits}",
        "en": "free {free} of 100, largest free block {largest_free}, fragmentation 1 - largest/free "
              "= {fragmentation:.0%}; request of {request} fits: {fits}",
    },
    "fragmentation_no_gpu": {
        "zh": "这里没有 GPU：在 GPU 上，这个单元格还会用 torch.cuda.memory_stats() 测量 "
              "expandable_segments={expandable} 时的显存",
        "en": "no GPU here: on a GPU this cell also measures torch.cuda.memory_stats() with "
              "expandable_segments {expandable}",
    },
    "fragmentation_cuda": {
        "zh": "expandable_segments={expandable}：reserved {reserved_mib:.0f} MiB，"
              "allocated {allocated_mib:.0f} MiB，inactive split {inactive_split_mib:.0f} MiB，"
              "segment 数 {segments}",
        "en": "expandable_segments={expandable}: reserved {reserved_mib:.0f} MiB, "
              "allocated {allocated_mib:.0f} MiB, inactive split {inactive_split_mib:.0f} MiB, "
              "segments {segments}",
    },
    # --- 7. pitfalls: profiling --------------------------------------------------------------
    "step_breakdown": {
        "zh": "rank {rank} {coords}：一步 {step_ms:.0f} ms = 计算 {compute:.0%}，all-reduce {all_reduce:.0%}，"
              "send/recv {send_recv:.0%}，空闲 {idle:.0%}",
        "en": "rank {rank} {coords}: step {step_ms:.0f} ms = compute {compute:.0%}, "
              "all-reduce {all_reduce:.0%}, send-recv {send_recv:.0%}, idle {idle:.0%}",
    },
    "traces": {
        "zh": "trace 文件（在 ui.perfetto.dev 里打开）：{path}",
        "en": "traces (open in ui.perfetto.dev): {path}",
    },
    # --- end -----------------------------------------------------------------------------------
    "notebook_ran": {
        "zh": "整本笔记本运行了 {seconds:.0f} s",
        "en": "notebook ran in {seconds:.0f} s",
    },
}
