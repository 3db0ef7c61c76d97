"""What notebook 2.0 (collectives) prints and draws in its own code cells."""

MESSAGES = {
    # --- 1. processes, ranks, process groups --------------------------------------------------
    "kernel_pid": {
        "zh": "笔记本内核的 pid：{pid}",
        "en": "notebook kernel pid: {pid}",
    },
    # --- 2. the six collectives -----------------------------------------------------------------
    "send_recv_title": {
        "zh": "rank 0 上 send(dst=1)，rank 1 上 recv(src=0)",
        "en": "send(dst=1) on rank 0, recv(src=0) on rank 1",
    },
    # --- 3. ring all-reduce from send/recv -------------------------------------------------------
    "ring_step_title": {
        "zh": "环上的一步：isend 给 rank+1，从 rank-1 irecv",
        "en": "one ring step: isend to rank+1, irecv from rank-1",
    },
    "stage_sent": {
        "zh": "发出的",
        "en": "sent",
    },
    "stage_received": {
        "zh": "收到的",
        "en": "received",
    },
    "ring_stage_start": {
        "zh": "开始时",
        "en": "before",
    },
    "ring_stage_after_reduce_scatter": {
        "zh": "reduce-scatter 之后（只画自己的块）",
        "en": "after reduce-scatter (own chunk)",
    },
    "ring_stage_after_all_gather": {
        "zh": "all-gather 之后",
        "en": "after all-gather",
    },
    "ring_matches_all_reduce": {
        "zh": "{world_size} 个 rank：assert_close 通过；各 rank 上 |ring - all_reduce| 的最大值 = "
              "{largest:.1e}",
        "en": "{world_size} ranks: assert_close passed; largest |ring - all_reduce| over ranks = "
              "{largest:.1e}",
    },
    # --- 4. bytes sent per rank -----------------------------------------------------------------
    "tensor_bytes": {
        "zh": "S = {size} 字节",
        "en": "S = {size} bytes",
    },
    # The header of the table whose rows print N, then 14, 11 | 18, 8 characters wide numbers;
    # the Chinese header fills the same widths on screen (a CJK character is two columns wide).
    "bytes_table_header": {
        "zh": " N | ring：最多发送  2(N-1)/N*S |  朴素：rank 0 发送  (N-1)*S",
        "en": " N | ring: max sent  2(N-1)/N*S | naive: rank 0 sent  (N-1)*S",
    },
    "sent_per_rank": {
        "zh": "每个 rank 发送的字节数：{sent}；公式：{formula}",
        "en": "sent per rank: {sent}  formula: {formula}",
    },
    # --- 5. bandwidth vs message size -----------------------------------------------------------
    "ring_by_hand": {
        "zh": "手写 ring（isend/irecv）",
        "en": "ring (hand, isend/irecv)",
    },
    "sweep_title": {
        "zh": "{world_size} 个 rank 上的 all-reduce（{backend}）",
        "en": "all-reduce on {world_size} ranks ({backend})",
    },
    # --- on real GPUs: 1 GiB over 8 ranks on each link ------------------------------------------
    "link_nvlink_spec": {
        "zh": "NVLink 4（H100 SXM），规格值",
        "en": "NVLink 4 (H100 SXM), spec",
    },
    "link_nvlink_measured": {
        "zh": "NVLink 4，p2p 实测（nccl#1264）",
        "en": "NVLink 4, measured p2p (nccl#1264)",
    },
    "link_infiniband": {
        "zh": "InfiniBand NDR，一个 400 Gb/s 端口",
        "en": "InfiniBand NDR, one 400 Gb/s port",
    },
    "link_this_machine": {
        "zh": "本机：CPU 上的 {backend}（上面的实测）",
        "en": "this machine: {backend} on CPU (measured above)",
    },
    "nvlink_link": {
        "zh": "NVLink 4（H100 SXM）",
        "en": "NVLink 4 (H100 SXM)",
    },
    # --- the last cell --------------------------------------------------------------------------
    "ran_in": {
        "zh": "本笔记本运行用时 {seconds:.0f} 秒",
        "en": "notebook ran in {seconds:.0f} s",
    },
}
