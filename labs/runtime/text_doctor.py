"""Messages of ``python -m labs doctor``, every notebook's environment cell (labs.runtime.doctor), the install check (labs.runtime.install_check) and the command line (labs.__main__).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

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
    "memory_free": {
        "zh": "空闲内存    {free:.1f} GiB（课程需要约 {need} GiB）",
        "en": "free memory {free:.1f} GiB (the course needs about {need} GiB)",
    },
    "ports": {
        "zh": "端口        回环地址 127.0.0.1 可用（系统给了端口 {port}）；{jupyter}（JupyterLab）{jupyter_state}；"
              "{torchrun}（torchrun）{torchrun_state}",
        "en": "ports       loopback 127.0.0.1 ok (got port {port}); {jupyter} (JupyterLab) "
              "{jupyter_state}; {torchrun} (torchrun) {torchrun_state}",
    },
    "ports_no_loopback": {
        "zh": "端口        回环地址 127.0.0.1 不可用",
        "en": "ports       loopback 127.0.0.1 NOT USABLE",
    },
    "loopback_failed": {
        "zh": "无法在回环地址 127.0.0.1 上打开 TCP 端口（{exc}）：各 rank 之间的 gloo 连接和 torchrun 都要用它。"
              "防火墙、VPN 或沙箱可能挡住了它：允许 Python 的本机连接，或者改用托管笔记本。",
        "en": "cannot open a TCP port on the loopback address 127.0.0.1 ({exc}): the ranks' gloo "
              "connections and torchrun need it. A firewall, VPN or sandbox may block it: allow "
              "local connections for Python, or use a hosted notebook.",
    },
    "port_free": {
        "zh": "空闲",
        "en": "free",
    },
    "port_in_use": {
        "zh": "已被占用",
        "en": "IN USE",
    },
    "took": {
        "zh": "检查用时 {seconds:.0f} 秒。",
        "en": "The check took {seconds:.0f} s.",
    },
    # --- python -m labs doctor: notes (the course still runs) ---------------------------------
    "memory_low": {
        "zh": "注意：空闲内存只有 {free:.1f} GiB，少于 {need} GiB：2.4 的 8 个 rank 可能放不下。"
              "上课前关掉其他程序（浏览器标签页、IDE、虚拟机），再运行 make doctor。",
        "en": "note: only {free:.1f} GiB of memory is free, less than {need} GiB: 2.4's 8 ranks "
              "may not fit. Close other programs (browser tabs, IDEs, virtual machines) before "
              "the workshop and run make doctor again.",
    },
    "jupyter_port_in_use": {
        "zh": "注意：端口 {port} 已被占用（另一个 JupyterLab 还开着？）：make lab 会换用下一个空闲端口，"
              "并打印新的地址；`jupyter server list` 列出正在运行的 Jupyter 服务器。",
        "en": "note: port {port} is in use (another JupyterLab still open?): make lab then takes "
              "the next free port and prints its address; `jupyter server list` shows the Jupyter "
              "servers that are running.",
    },
    "torchrun_port_in_use": {
        "zh": "注意：端口 {port} 已被占用：它是 torchrun 多机会合（rendezvous）的默认端口（README 里的多机命令、"
              "scripts/slurm）；可能还有一次 torchrun 在运行。多机运行时换一个端口"
              "（--rdzv-endpoint=主机:{other}，Slurm 用 LABS_RDZV_PORT）。笔记本用不到它"
              "（2.5 自己找空闲端口）。",
        "en": "note: port {port} is in use: it is torchrun's default rendezvous port for several "
              "machines (the README's multi-machine command, scripts/slurm); a torchrun run may "
              "still be going. For a multi-machine run pick another port "
              "(--rdzv-endpoint=HOST:{other}, LABS_RDZV_PORT under Slurm). The notebooks do not "
              "need it (2.5 finds a free port itself).",
    },
    "launches_slow": {
        "zh": "注意：这台机器启动 rank 很慢（{n} 个 rank 热启动用了 {warm:.1f} 秒，超过 {limit:.0f} 秒）："
              "笔记本会比课程地图给的时间慢。关掉其他程序后再运行 make doctor；仍然这么慢，就按下面的"
              "「怎么办」改用更少的 rank 或托管笔记本。",
        "en": "note: ranks start slowly here ({n} ranks took {warm:.1f} s warm, over {limit:.0f} "
              "s): the notebooks will take longer than the course map says. Close other programs "
              "and run make doctor again; if it stays this slow, use fewer ranks or a hosted "
              "notebook as \"What to do\" below says.",
    },
    # --- python -m labs doctor: what to do when ranks do not run (the weak-laptop fallback) ---
    "fallback": {
        "zh": "怎么办：",
        "en": "What to do:",
    },
    "fallback_no_8": {
        "zh": "- 2.4 需要 8 个 rank（它的 2×2×2 网格）：2.4 改用托管笔记本（Google Colab 或 Kaggle，"
              "见 README「托管笔记本」），或者腾出内存后再运行 make doctor。",
        "en": "- 2.4 needs 8 ranks (its 2×2×2 mesh): run 2.4 as a hosted notebook (Google Colab or "
              "Kaggle, see the README's \"Hosted notebooks\"), or free some memory and run make "
              "doctor again.",
    },
    "fallback_no_4": {
        "zh": "- 2.1、2.2、2.3：把第一个代码单元格里的 WORLD_SIZE = 4 改成 WORLD_SIZE = 2，它们照样能运行到底"
              "（图和数字变成 2 个 rank 的；少数单元格和练习检查仍会启动自己的 rank 数）。2.0（它的进程组演示"
              "把 4 个 rank 分成两组）和 2.4 改用托管笔记本。",
        "en": "- 2.1, 2.2, 2.3: change WORLD_SIZE = 4 to WORLD_SIZE = 2 in the first code cell; "
              "they still run to the end (the figures and numbers are then those of 2 ranks; a "
              "few cells and the exercise checks still start their own number of ranks). Run 2.0 "
              "(its process-group demo splits 4 ranks into two groups) and 2.4 as hosted "
              "notebooks.",
    },
    "fallback_hosted": {
        "zh": "- 托管笔记本：在 Google Colab 或 Kaggle 里打开学生版笔记本，先运行第一个代码单元格"
              "（见 README「托管笔记本」）；Colab 的免费运行时有 2 个核，和测试本课程的机器一样。",
        "en": "- Hosted notebooks: open the student notebook in Google Colab or Kaggle and run its "
              "first code cell first (see the README's \"Hosted notebooks\"); Colab's free runtime "
              "has 2 cores, like the machines the course is tested on.",
    },
    "fallback_send": {
        "zh": "- 在工作坊之前把这段输出发给讲师。",
        "en": "- Send this output to your instructor before the workshop.",
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
        "zh": "检查环境（内存、端口），并运行 2、4、8 个 rank 的 all-reduce",
        "en": "check the environment (memory, ports) and run 2-, 4- and 8-rank all-reduces",
    },
    "cli_run": {
        "zh": "在 torchrun 下让每个 rank 运行 MODULE:FUNCTION",
        "en": "run MODULE:FUNCTION on every rank under torchrun",
    },
    "cli_target": {
        "zh": "package.module:function 或 path/to/file.py:function",
        "en": "package.module:function or path/to/file.py:function",
    },
    "cli_check": {
        "zh": "安装检查：先做环境检查，再把一个短笔记本完整运行一遍（不修改它）",
        "en": "the install check: the environment check, then one short notebook run end to end "
              "(the file is not changed)",
    },
    "cli_notebook": {
        "zh": "要运行的笔记本，例如 notebooks/2.0_collectives.ipynb",
        "en": "the notebook to run, e.g. notebooks/en/2.0_collectives.ipynb",
    },
    # --- python -m labs check (make check): the install check (labs.runtime.install_check) ---
    "check_no_notebook": {
        "zh": "安装检查失败：找不到笔记本 {notebook}（在课程文件夹里运行 make check）。",
        "en": "install check FAILED: no notebook {notebook} (run make check in the course folder).",
    },
    "check_doctor_failed": {
        "zh": "安装检查失败：环境检查发现了上面的问题；按提示修好后再运行 make check。",
        "en": "install check FAILED: the environment check found the problems above; fix them as "
              "it says, then run make check again.",
    },
    "check_running": {
        "zh": "运行笔记本 {notebook}（在内存里运行一份副本，你的文件不会被修改；约一分钟）……",
        "en": "running the notebook {notebook} (a copy, in memory: your file is not changed; "
              "about a minute) ...",
    },
    "check_notebook_failed": {
        "zh": "安装检查失败：笔记本 {notebook} 没能运行到底（{exc_type}）：\n{detail}\n"
              "请看 README 的「常见问题」，或把这段输出发给讲师。",
        "en": "install check FAILED: the notebook {notebook} did not run to the end ({exc_type}):"
              "\n{detail}\nSee Troubleshooting in the README, or send this output to your "
              "instructor.",
    },
    "check_passed": {
        "zh": "安装检查通过：环境正常，{notebook} 的 {cells} 个代码单元格运行到底（{seconds:.0f} 秒；"
              "其中 {raised} 个练习检查报错，这在练习完成之前是正常的）。",
        "en": "install check passed: the environment is ready and {notebook} ran to the end, "
              "{cells} code cells in {seconds:.0f} s ({raised} exercise checks raised, as they do "
              "until the exercises are done).",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    # values in the doctor's status lines ("gloo=yes", "8888 (JupyterLab) free")
    "yes", "no", "port_free", "port_in_use",
    "fallback", "problems",  # headings of the lists below them
})
