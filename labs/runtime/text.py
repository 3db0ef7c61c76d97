"""Messages of the launcher and the runtime (labs.runtime: launch errors, the forkserver, ranks, torchrun, stacks of a hung run) and of the old names of the flat layout (labs._moved, labs._compat).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

_TRY_AGAIN = {
    "zh": "请检查每个 rank 是否以相同的顺序调用相同的集合通信，以及每个 recv 是否都有对应的 send。",
    "en": "check that every rank calls the same collectives in the same order, and that each "
          "recv has a matching send.",
}

MESSAGES = {
    # --- labs.launch: input checks ------------------------------------------------------------
    "windows": {
        "zh": "课程的 rank 需要 Linux 或 macOS（fork、Unix 套接字和 POSIX 信号），Windows 上无法运行："
              "请改用 WSL2、GitHub Codespaces（仓库里有 .devcontainer）或托管笔记本（Colab、Kaggle）。",
        "en": "The course's ranks need Linux or macOS (fork, Unix sockets and POSIX signals) and "
              "cannot run on Windows: use WSL2, GitHub Codespaces (the repository has a "
              ".devcontainer) or a hosted notebook (Colab, Kaggle) instead.",
    },
    "slurm_unset": {
        "zh": "{name} 没有设置：请在 Slurm 作业里运行（sbatch scripts/slurm/train.sbatch）。",
        "en": "{name} is not set: run this inside a Slurm job (sbatch scripts/slurm/train.sbatch).",
    },
    "slurm_unreadable": {
        "zh": "读不懂 Slurm 变量 {name}={value!r}。",
        "en": "cannot read the Slurm variable {name}={value!r}.",
    },
    "slurm_node_rank": {
        "zh": "SLURM_NODEID={node_rank}，但 SLURM_NNODES={nnodes}：节点编号必须小于节点数。",
        "en": "SLURM_NODEID={node_rank} but SLURM_NNODES={nnodes}: the node's number must be "
              "below the number of nodes.",
    },
    "max_world_size_not_a_number": {
        "zh": "LABS_MAX_WORLD_SIZE={value!r} 不是表示 rank 数的正整数：把它设为允许的最多 rank 数"
              "（例如 16），或者取消这个设置。",
        "en": "LABS_MAX_WORLD_SIZE={value!r} is not a whole number of ranks: set it to the most "
              "ranks to allow (for example 16), or unset it.",
    },
    "unknown_backend": {
        "zh": "backend={backend!r} 不在 {backends} 之中：用 'auto' 让启动器（launcher）自己选择，"
              "'gloo' 用于 CPU，'nccl' 用于 GPU。",
        "en": "backend={backend!r} is not one of {backends}: use 'auto' to let the launcher "
              "choose, 'gloo' for CPU or 'nccl' for GPUs.",
    },
    "nccl_too_few_gpus": {
        "zh": "backend='nccl' 要求每个 rank 一块 CUDA GPU：world_size={world_size}，但这台机器只有 "
              "{gpus} 个 CUDA 设备。请改用 backend='gloo'（CPU）、backend='auto'，"
              "或者让 world_size <= {gpus}。",
        "en": "backend='nccl' needs one CUDA GPU per rank: world_size={world_size} but this "
              "machine has {gpus} CUDA device(s). Use backend='gloo' (CPU), backend='auto', "
              "or world_size <= {gpus}.",
    },
    "nccl_no_gpus": {
        "zh": "backend='nccl' 需要 CUDA GPU，而这台机器一块也没有。请改用 backend='gloo'"
              "（在 CPU 上运行）或 backend='auto'。",
        "en": "backend='nccl' needs CUDA GPUs and this machine has none. Use backend='gloo' "
              "(runs on CPU) or backend='auto'.",
    },
    "not_a_function": {
        "zh": "labs.launch 需要一个要运行的函数，收到的却是 {type}：请传入函数本身，"
              "例如 labs.launch(train, 4)，而不是 train()。",
        "en": "labs.launch needs a function to run, got {type}: pass the function itself, "
              "e.g. labs.launch(train, 4), not train().",
    },
    "world_size_not_int": {
        "zh": "world_size 必须是整数（int），收到的是 {value!r}。",
        "en": "world_size must be an int, got {value!r}.",
    },
    "world_size_too_small": {
        "zh": "world_size={world_size}：一次运行至少需要一个 rank（world_size >= 1）。",
        "en": "world_size={world_size}: a run needs at least one rank (world_size >= 1).",
    },
    "args_not_tuple": {
        "zh": "args 必须是由位置参数组成的元组（tuple），收到的是 {type}：只有一个参数时写 args=(x,)。",
        "en": "args must be a tuple of positional arguments, got {type}: write args=(x,) for "
              "one argument.",
    },
    "kwargs_not_dict": {
        "zh": "kwargs 必须是字典（dict），收到的是 {type}。",
        "en": "kwargs must be a dict, got {type}.",
    },
    "timeout_not_number": {
        "zh": "timeout={timeout!r}：请用一个数给出这次运行最多可以用的秒数。",
        "en": "timeout={timeout!r}: give the seconds the run may take, as a number.",
    },
    "timeout_out_of_range": {
        "zh": "timeout={timeout!r}：请给出这次运行最多可以用的秒数，要 > 0 且不超过 {most:.0f}"
              "（一天）；卡住的运行总得有结束的时候。",
        "en": "timeout={timeout!r}: give the seconds the run may take, > 0 and at most "
              "{most:.0f} (one day); a hung run must end some time.",
    },
    "world_size_too_large": {
        "zh": "world_size={world_size}：这台机器（{cores} 个核）跑不了这么多 CPU rank，"
              "这里最多运行 {most} 个。请用更小的 world_size（课程用 2、4 或 8），"
              "或者设置 LABS_MAX_WORLD_SIZE 提高上限。",
        "en": "world_size={world_size} is too many CPU ranks for this machine ({cores} cores): "
              "at most {most} run here. Use a smaller world_size (the course uses 2, 4 or 8), "
              "or set LABS_MAX_WORLD_SIZE to raise the limit.",
    },
    # --- labs.launch: what went wrong in a run ------------------------------------------------
    "cannot_send_task": {
        "zh": "labs.launch 无法把 {name!r} 及其参数发送给各 rank（{exc_type}: {exc}）。"
              "打开的文件、锁、套接字（socket）或进程组这类对象无法传送：请改为在函数内部创建它们。",
        "en": "labs.launch could not send {name!r} and its arguments to the ranks "
              "({exc_type}: {exc}). Objects such as open files, locks, sockets or process "
              "groups cannot travel: create them inside the function instead.",
    },
    "result_unloadable": {
        "zh": "rank {rank}（共 {world_size} 个）返回的值无法在这个进程中加载（{exc_type}: {exc}）。"
              "它的类型必须能在这里导入：请返回张量、数字、字符串，或由它们组成的 list/tuple/dict。",
        "en": "rank {rank} of {world_size} returned a value that cannot be loaded in this "
              "process ({exc_type}: {exc}). Its type must be importable here: return tensors, "
              "numbers, strings, or lists/tuples/dicts of them.",
    },
    "result_unsendable": {
        "zh": "rank {rank}（共 {world_size} 个）返回的值无法传回调用方（{message}）。"
              "请返回张量、数字、字符串，或由它们组成的 list/tuple/dict。",
        "en": "rank {rank} of {world_size} returned a value that cannot be sent back to the "
              "caller ({message}). Return tensors, numbers, strings, or lists/tuples/dicts "
              "of them.",
    },
    "rank_raised": {
        "zh": "rank {rank}（共 {world_size} 个）抛出了 {message}",
        "en": "rank {rank} of {world_size} raised {message}",
    },
    "rank_raised_in_setup": {
        "zh": "rank {rank}（共 {world_size} 个）在建立进程组时抛出了 {message}",
        "en": "rank {rank} of {world_size} raised {message} while setting up the process group",
    },
    "traceback_on_rank": {
        "zh": "--- rank {rank} 上的 traceback ---",
        "en": "--- traceback on rank {rank} ---",
    },
    "others_stopped": {
        "zh": "--- 其余的 rank（{others}）已被停止 ---",
        "en": "--- the other ranks ({others}) were stopped ---",
    },
    "rank_killed_by_signal": {
        "zh": "rank {rank}（共 {world_size} 个）被信号 {signal} 终止，没有抛出 Python 异常"
              "（C++ 中的崩溃、os._exit 或者信号）。它最后打印的几行：",
        "en": "rank {rank} of {world_size} was killed by signal {signal} without a Python "
              "exception (a crash in C++, os._exit or a signal). The last lines it printed:",
    },
    "rank_exited_with_code": {
        "zh": "rank {rank}（共 {world_size} 个）以退出码 {code} 退出，没有抛出 Python 异常"
              "（C++ 中的崩溃、os._exit 或者信号）。它最后打印的几行：",
        "en": "rank {rank} of {world_size} exited with code {code} without a Python exception "
              "(a crash in C++, os._exit or a signal). The last lines it printed:",
    },
    "nothing_printed": {
        "zh": "（没有输出）",
        "en": "(nothing)",
    },
    "peers_failed": {
        "zh": "rank {waiting}（共 {world_size} 个）在等待对端（peer）时失败：{message}",
        "en": "ranks {waiting} of {world_size} failed waiting for a peer: {message}",
    },
    "no_results": {
        "zh": "各 rank 已经结束，却没有返回结果（被外部杀掉了？）",
        "en": "the ranks ended without returning results (killed from outside?)",
    },
    "timed_out": {
        "zh": "运行 {elapsed:.1f} 秒后超时（timeout={timeout:g}）：rank {waiting}"
              "（共 {world_size} 个）仍在运行。",
        "en": "timed out after {elapsed:.1f} s (timeout={timeout:g}): ranks {waiting} of "
              "{world_size} were still running.",
    },
    "timed_out_some_finished": {
        "zh": "运行 {elapsed:.1f} 秒后超时（timeout={timeout:g}）：rank {waiting}"
              "（共 {world_size} 个）仍在运行；rank {finished} 已经完成。",
        "en": "timed out after {elapsed:.1f} s (timeout={timeout:g}): ranks {waiting} of "
              "{world_size} were still running; ranks {finished} had finished.",
    },
    "hang_unknown": {
        "zh": "一个 rank 如果阻塞在一个没有其他 rank 配合的集合通信（collective）或 recv 上，"
              "就会一直卡住：" + _TRY_AGAIN["zh"] + "如果只是计算慢，请传入更大的 timeout=。",
        "en": "A rank blocked in a collective or a recv that no other rank matches hangs: "
              + _TRY_AGAIN["en"] + " If the work is just slow, pass a larger timeout=.",
    },
    "hang_deadlock": {
        "zh": "每个还在等待的 rank 都阻塞在通信中，等着一个永远不会来的对端，这是死锁（deadlock）："
              + _TRY_AGAIN["zh"],
        "en": "Every waiting rank was blocked in communication, waiting for a peer that never "
              "came (a deadlock): " + _TRY_AGAIN["en"],
    },
    "hang_not_all_waiting": {
        "zh": "并非每个 rank 都在等待对端：某个仍在运行自己代码的 rank 要么太慢"
              "（请传入更大的 timeout=），要么陷入了死循环。",
        "en": "Not every rank was waiting for a peer: a rank still running its own code was "
              "either slow (pass a larger timeout=) or in an endless loop.",
    },
    "helper_also_frozen": {
        "zh": "（启动器的辅助进程 pid {pid} 也停止了响应；它已被停止，下一次启动会开一个新的。）",
        "en": "(The launcher's helper process, pid {pid}, had also stopped answering; it was "
              "stopped and the next launch starts a new one.)",
    },
    # --- where the ranks of a hung run were waiting (labs.runtime.stacks) ---------------------
    "stack_one_rank": {
        "zh": "rank {rank}",
        "en": "rank {rank}",
    },
    "stack_ranks": {
        "zh": "rank {ranks}",
        "en": "ranks {ranks}",
    },
    "stack_in_communication": {
        "zh": "在通信中等待（{func}）",
        "en": "waiting in communication ({func})",
    },
    "stack_running": {
        "zh": "仍在运行（不在通信中）",
        "en": "still running (not in communication)",
    },
    "stack_header": {
        "zh": "--- {who}：{state} ---",
        "en": "--- {who}: {state} ---",
    },
    "stack_your_code": {
        "zh": "  你的代码：{where}",
        "en": "  your code: {where}",
    },
    "stack_frame": {
        "zh": "{path} 第 {line} 行，{func}",
        "en": "{path} line {line} in {func}",
    },
    "stack_frame_with_source": {
        "zh": "{path} 第 {line} 行，{func}：{source}",
        "en": "{path} line {line} in {func}: {source}",
    },
    # --- the launcher's helper process (labs.runtime.forkserver) -------------------------------
    # each problem one sentence that names the helper; then helper_restart
    "helper_restart": {
        "zh": "本次启动的 rank 已被停止。请重新运行这个单元格：下一次启动会开一个新的辅助进程"
              "（要几秒钟，它会导入 torch）。",
        "en": "The ranks of this launch were stopped. Run the cell again: the next launch starts "
              "a fresh helper (a few seconds, it imports torch).",
    },
    "helper_killed_during_run": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）在运行期间被信号 {signal} 终止了。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "was killed by signal {signal} during the run.",
    },
    "helper_killed_while_starting": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）在启动 rank 时被信号 {signal} "
              "终止了。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "was killed by signal {signal} while starting a rank.",
    },
    "helper_ended_during_run": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）在运行期间意外结束了。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "ended unexpectedly during the run.",
    },
    "helper_ended_while_starting": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）在启动 rank 时意外结束了。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "ended unexpectedly while starting a rank.",
    },
    "helper_closed_connection": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）在启动 rank 时关闭了连接。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "closed its connection while starting a rank.",
    },
    "helper_frozen_during_run": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）在运行期间停止了响应，"
              "因此被停止了。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "stopped answering during the run, so it was stopped.",
    },
    "helper_refused": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）拒绝启动 rank"
              "（{exc_type}: {exc}）。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "refused to start a rank ({exc_type}: {exc}).",
    },
    "helper_no_answer": {
        "zh": "启动器的辅助进程（启动各 rank 的 forkserver，pid {pid}）没有及时响应启动 rank 的请求，"
              "因此被停止了。",
        "en": "The launcher's helper process (the forkserver that starts the ranks, pid {pid}) "
              "did not answer in time to start a rank, so it was stopped.",
    },
    # --- the temporary folder (labs.runtime.processes) ----------------------------------------
    "temp_how_to_fix": {
        "zh": "请在那里腾出一些空间，或者把 TMPDIR 指向一个可写、有空间的文件夹"
              "（例如 `mkdir -p ~/tmp && export TMPDIR=~/tmp`），然后重启内核。",
        "en": "Free some space there, or point TMPDIR at a writable folder with room "
              "(for example `mkdir -p ~/tmp && export TMPDIR=~/tmp`) and restart the kernel.",
    },
    "no_temp_folder": {
        "zh": "没有可用的临时目录：{reason}（试过 TMPDIR、/tmp、/var/tmp、/usr/tmp 和当前文件夹；"
              "临时目录必须存在、可写并且有剩余空间）。torch 和 labs.launch 都需要它。{fix}",
        "en": "no usable temporary folder: {reason} (tried TMPDIR, /tmp, /var/tmp, /usr/tmp "
              "and the current folder; each must exist, be writable and have free space). "
              "torch and labs.launch need one. {fix}",
    },
    "temp_folder_full": {
        "zh": "临时目录 {folder} 已满：只剩 {free_mib:.1f} MiB，而 labs.launch 的运行文件夹"
              "在那里至少需要 {need_mib} MiB。{fix}",
        "en": "the temporary folder {folder} is full: {free_mib:.1f} MiB free, and labs.launch "
              "needs at least {need_mib} MiB there for its run folders. {fix}",
    },
    "run_folder_full": {
        "zh": "labs.launch 无法写入它的运行文件夹：{path} 已满（设备上没有剩余空间）。{fix}",
        "en": "labs.launch could not write its run folder: {path} is full (no space left on the "
              "device). {fix}",
    },
    "run_folder_not_writable": {
        "zh": "labs.launch 无法写入它的运行文件夹：{path} 不可写。{fix}",
        "en": "labs.launch could not write its run folder: {path} is not writable. {fix}",
    },
    "run_folder_write_failed": {
        "zh": "labs.launch 无法写入它的运行文件夹：{path} 无法写入（{reason}）。{fix}",
        "en": "labs.launch could not write its run folder: {path} could not be written "
              "({reason}). {fix}",
    },
    # --- inside a rank (labs.runtime.rank) ----------------------------------------------------
    "threads_per_rank_invalid": {
        "zh": "LABS_THREADS_PER_RANK={value!r} 不是正整数：把它设为每个 rank 使用的算子内"
              "（intra-op）线程数（例如 1），或者取消这个设置，让各 rank 平分 CPU 核",
        "en": "LABS_THREADS_PER_RANK={value!r} is not a positive integer: set it to the number "
              "of intra-op threads each rank should use (e.g. 1), or unset it to share the "
              "cores out evenly",
    },
    "str_failed": {
        "zh": "<这个异常的 str() 失败了：{type}>",
        "en": "<str() of this exception failed: {type}>",
    },
    # --- python -m labs run (labs.runtime.torchrun) -------------------------------------------
    "torchrun_bad_target": {
        "zh": "labs run：需要 MODULE:FUNCTION 这种形式，收到的是 {target!r}"
              "（例如 labs.runtime.examples:all_reduce_demo）。",
        "en": "labs run: expected MODULE:FUNCTION, got {target!r} "
              "(for example labs.runtime.examples:all_reduce_demo).",
    },
    "torchrun_no_function": {
        "zh": "labs run：{module} 中没有函数 {name!r}。",
        "en": "labs run: {module} has no function {name!r}.",
    },
    "torchrun_needed": {
        "zh": "这个程序必须由 torchrun 启动（缺少 {missing}）：torchrun --standalone "
              "--nproc-per-node=2 {command}",
        "en": "this must be started by torchrun (missing {missing}): torchrun --standalone "
              "--nproc-per-node=2 {command}",
    },
    "torchrun_returned": {
        "zh": "[rank {rank}] {name} 返回了 {result!r}",
        "en": "[rank {rank}] {name} returned {result!r}",
    },
    # --- old names of the flat layout (labs._moved, labs._compat) -----------------------------
    "removed_in": {
        "zh": "labs 0.2（本期课程结束之后）",
        "en": "labs 0.2, after the current course run",
    },
    "moved_module": {
        "zh": "{old} 已移到 {new}；请导入新的名字（旧名字将在 {removed_in}移除）。",
        "en": "{old} moved to {new}; import the new name (the old one is removed in "
              "{removed_in}).",
    },
    "moved_attribute": {
        "zh": "{old} 已移到 {new}；请使用新的名字（旧名字将在 {removed_in}移除）。",
        "en": "{old} moved to {new}; use the new name (the old one is removed in {removed_in}).",
    },
    "compat_bytes_per_param": {
        "zh": "bytes_per_param 已不再支持 16 以外的值：请改为调用 labs.formulas.memory / labs.formulas.cost，"
              "并传入 optimizer= 和 precision=",
        "en": "bytes_per_param other than 16 is gone: call labs.formulas.memory / labs.formulas.cost with "
              "optimizer= and precision= instead",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "nothing_printed",  # shown alone in place of a rank's last lines
    "stack_one_rank", "stack_ranks",  # who a stack belongs to, in front of its state
})
