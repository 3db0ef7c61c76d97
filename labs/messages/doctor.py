"""Messages of ``python -m labs doctor``, every notebook's environment cell (labs.runtime.doctor) and the command line (labs.__main__).

Holds only the zh/en texts (``MESSAGES``): no logic. Must not: import anything (labs.messages is the
bottom layer) or format, print or decide."""

MESSAGES = {
    # --- python -m labs doctor: what it found -------------------------------------------------
    "temp_folder": {
        "zh": "临时目录    {root}（剩余 {free:.1f} GiB）",
        "en": "temp folder {root} ({free:.1f} GiB free)",
    },
    "temp_folder_none": {
        "zh": "临时目录    没有可用的",
        "en": "temp folder NONE USABLE",
    },
    "python": {
        "zh": "python      {version}（{platform}）",
        "en": "python      {version} ({platform})",
    },
    "torch": {
        "zh": "torch       {version}",
        "en": "torch       {version}",
    },
    "backends": {
        "zh": "后端        gloo={gloo}  nccl={nccl}",
        "en": "backends    gloo={gloo}  nccl={nccl}",
    },
    "yes": {
        "zh": "有",
        "en": "yes",
    },
    "no": {
        "zh": "无",
        "en": "no",
    },
    "cpu": {
        "zh": "CPU         {cores} 个核",
        "en": "cpu         {cores} cores",
    },
    "cpu_and_memory": {
        "zh": "CPU         {cores} 个核，内存 {memory:.1f} GiB",
        "en": "cpu         {cores} cores, {memory:.1f} GiB memory",
    },
    "max_ranks": {
        "zh": "最多 rank   同时最多 {most} 个 CPU rank（可用 LABS_MAX_WORLD_SIZE 覆盖）",
        "en": "max ranks   {most} CPU ranks at once (LABS_MAX_WORLD_SIZE overrides)",
    },
    "gpus": {
        "zh": "GPU         {count} 块：{names}",
        "en": "gpus        {count}: {names}",
    },
    "font": {
        "zh": "中文字体    {family}（{path}）",
        "en": "CJK font    {family} ({path})",
    },
    "font_missing": {
        "zh": "中文字体    没有 {family}：图中文字会用英文（pip install mplfonts==0.0.11 后重启内核）",
        "en": "CJK font    no {family}: figure labels fall back to English "
              "(pip install mplfonts==0.0.11, then restart the kernel)",
    },
    "no_gpus": {
        "zh": "GPU         无（课程在 CPU 上用 gloo 运行）",
        "en": "gpus        none (the course runs on CPU with gloo)",
    },
    "all_reduce_ok": {
        "zh": "all_reduce  {backend} x{n}：正确（sum={got:g}，期望 {expected:g}）；"
              "启动 {cold:.2f} 秒，热启动 {warm:.2f} 秒",
        "en": "all_reduce  {backend} x{n}: ok (sum={got:g}, expected {expected:g}); launch "
              "{cold:.2f} s, then {warm:.2f} s warm",
    },
    "all_reduce_wrong": {
        "zh": "all_reduce  {backend} x{n}：错误（sum={got:g}，期望 {expected:g}）；"
              "启动 {cold:.2f} 秒，热启动 {warm:.2f} 秒",
        "en": "all_reduce  {backend} x{n}: WRONG (sum={got:g}, expected {expected:g}); launch "
              "{cold:.2f} s, then {warm:.2f} s warm",
    },
    "all_reduce_failed": {
        "zh": "all_reduce  {backend} x{n}：失败（{exc_type}）",
        "en": "all_reduce  {backend} x{n}: FAILED ({exc_type})",
    },
    # --- python -m labs doctor: the verdict ---------------------------------------------------
    "problems": {
        "zh": "问题：",
        "en": "PROBLEMS:",
    },
    "all_good": {
        "zh": "一切正常：这台机器可以运行本课程。",
        "en": "All good: the course can run here.",
    },
    "torch_in_range": {
        "zh": "注意：课程在 torch {pinned} 上测试；torch {version} 在课程支持的范围（>= {low}，< {high}）内，"
              "应当可以运行，只是个别数字的最后几位可能与笔记本里保存的输出不同。",
        "en": "note: the course is tested on torch {pinned}; torch {version} is within the range it "
              "supports (>= {low}, < {high}) and should work, though the last digits of some numbers "
              "may differ from the saved outputs.",
    },
    "torch_too_old": {
        "zh": "警告：torch {version} 早于课程支持的 {low}：部分笔记本用到的 API 还不存在（见下面的问题）；"
              "请运行 `make setup`（或 `pip install torch=={pinned}`）。",
        "en": "warning: torch {version} is older than {low}, the oldest the course supports: some "
              "APIs the notebooks use do not exist yet (see the problems below); run `make setup` "
              "(or `pip install torch=={pinned}`).",
    },
    "torch_too_new": {
        "zh": "警告：torch {version} 不在课程支持的范围（>= {low}，< {high}）内，没有测试过；"
              "遇到错误时请改用 torch=={pinned}（`make setup`）。",
        "en": "warning: torch {version} is outside the range the course supports (>= {low}, < {high}) "
              "and untested; if something fails, use torch=={pinned} (`make setup`).",
    },
    "torch_api_missing": {
        "zh": "torch {version} 没有 {name}：笔记本 {notebooks} 中用到它的小节会出错；"
              "请运行 `make setup`（或 `pip install torch=={pinned}`）。",
        "en": "torch {version} has no {name}: the sections of notebook(s) {notebooks} that use it "
              "will fail; run `make setup` (or `pip install torch=={pinned}`).",
    },
    "no_gloo": {
        "zh": "这个 torch 构建没有 gloo 后端：请安装官方的 torch=={pinned} wheel。",
        "en": "this torch build has no gloo backend: install the official torch=={pinned} wheel.",
    },
    "ranks_do_not_fit": {
        "zh": "{n} 个 CPU rank 超出了这台机器的内存：请关闭其他程序，或者少用几个 rank。",
        "en": "{n} CPU ranks do not fit this machine's memory: close other programs or use "
              "fewer ranks.",
    },
    "all_reduce_gave_wrong": {
        "zh": "{n} 个 rank 上的 {backend} all-reduce 得到 {got}，而不是 {expected}："
              "请重新安装 torch=={pinned}。",
        "en": "the {backend} all-reduce on {n} ranks gave {got}, not {expected}: reinstall "
              "torch=={pinned}.",
    },
    "all_reduce_raised": {
        "zh": "{n} 个 rank 上的 {backend} all-reduce 失败了：{exc}\n"
              "  如果是网络错误，请设置 GLOO_SOCKET_IFNAME=lo（Linux）或 lo0（macOS）；"
              "并检查临时目录（{tmpdir}）是否可写。",
        "en": "the {backend} all-reduce on {n} ranks failed: {exc}\n"
              "  If it is a network error, set GLOO_SOCKET_IFNAME=lo (Linux) or lo0 (macOS); "
              "check that the temporary folder ({tmpdir}) is writable.",
    },
    # --- every notebook's environment cell ----------------------------------------------------
    "environment": {
        "zh": "torch {torch} · python {python} · {cores} CPU 核 · GPU {gpus} 块",
        "en": "torch {torch} · python {python} · {cores} CPU cores · {gpus} GPU(s)",
    },
    "environment_cpu_devices": {
        "zh": "cpu × {world_size}（每个 rank {threads} 个线程）",
        "en": "cpu × {world_size} (threads per rank: {threads})",
    },
    "environment_uses": {
        "zh": "本笔记本使用：world_size={world_size}，backend={backend}，设备：{devices}",
        "en": "This notebook uses: world_size={world_size}, backend={backend}, devices: {devices}",
    },
    # --- the command line (python -m labs) ----------------------------------------------------
    "cli_doctor": {
        "zh": "检查环境，并运行 2 个和 4 个 rank 的 all-reduce",
        "en": "check the environment and run 2- and 4-rank all-reduces",
    },
    "cli_run": {
        "zh": "在 torchrun 下让每个 rank 运行 MODULE:FUNCTION",
        "en": "run MODULE:FUNCTION on every rank under torchrun",
    },
    "cli_target": {
        "zh": "package.module:function 或 path/to/file.py:function",
        "en": "package.module:function or path/to/file.py:function",
    },
}
