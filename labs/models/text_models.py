"""Messages of the shared ground: the models, the data, the reference training loop and the tolerance policy (labs.models, labs.data, labs.reference, labs.numerics).

Holds only the zh/en texts (``MESSAGES``) and which short ones are labels (``LABELS``): no logic.
Must not: import anything (it is data, loaded by labs.messages) or format, print or decide."""

MESSAGES = {
    # --- comparing with the reference (labs.numerics; the pipeline's and TP's checks) ---------
    "gradient_of": {
        "zh": "{name} 的梯度",
        "en": "gradient of {name}",
    },
    # --- labs.models --------------------------------------------------------------------------
    "config_not_positive": {
        "zh": "TinyGPTConfig.{name} 必须是正整数，收到的是 {value!r}",
        "en": "TinyGPTConfig.{name} must be a positive integer, got {value!r}",
    },
    "n_embd_not_divisible": {
        "zh": "n_embd={n_embd} 不能被 n_head={n_head} 整除：每个头（head）分到 n_embd / n_head 个"
              "通道。请用 {n_head} 的倍数作为 n_embd（例如 {example}），或者从 {divisors} 中"
              "选一个 n_head。",
        "en": "n_embd={n_embd} is not divisible by n_head={n_head}: every head gets "
              "n_embd / n_head channels. Use an n_embd that is a multiple of {n_head} "
              "(e.g. {example}) or an n_head among {divisors}.",
    },
    "dropout_out_of_range": {
        "zh": "dropout={dropout} 必须在 [0, 1) 之内；用 0.0 关闭 dropout",
        "en": "dropout={dropout} must lie in [0, 1); use 0.0 to switch it off",
    },
    "sequence_too_long": {
        "zh": "序列长度 {length} 超过了 block_size={block_size}；请截短输入，"
              "或者用更大的 block_size 构建模型",
        "en": "sequence length {length} exceeds block_size={block_size}; crop the input or "
              "build the model with a larger block_size",
    },
    "mlp_sizes": {
        "zh": "sizes={sizes} 必须列出至少两个正的宽度，输入在前、输出在后，例如 [16, 64, 4]",
        "en": "sizes={sizes} must list at least two positive widths, input first and output "
              "last, e.g. [16, 64, 4]",
    },
    "unknown_activation": {
        "zh": "activation={activation!r} 未知；请从 {choices} 中选一个",
        "en": "activation={activation!r} is unknown; choose one of {choices}",
    },
    # --- labs.data ----------------------------------------------------------------------------
    "tokenizer_codes": {
        "zh": "CharTokenizer 只能处理编码不超过 255 的字符",
        "en": "CharTokenizer handles characters with codes up to 255 only",
    },
    "unknown_characters": {
        "zh": "字符 {chars} 不在这份 {vocab_size} 个符号的词表中；请去掉它们，"
              "或者用包含它们的文本构建分词器（tokenizer）",
        "en": "characters {chars} are not in the vocabulary of {vocab_size} symbols; remove "
              "them or build the tokenizer from a text that contains them",
    },
    "val_fraction_out_of_range": {
        "zh": "val_fraction={val_fraction} 必须严格介于 0 和 1 之间",
        "en": "val_fraction={val_fraction} must lie strictly between 0 and 1",
    },
    "unknown_split": {
        "zh": "split={split!r} 未知；请用 {splits} 之一",
        "en": "split={split!r} is unknown; use one of {splits}",
    },
    "block_size_out_of_range": {
        "zh": "block_size={block_size} 必须在 [1, {most}] 之内（{split} 部分）",
        "en": "block_size={block_size} must lie in [1, {most}] for the {split} split",
    },
    "batch_size_too_small": {
        "zh": "batch_size={batch_size} 至少要为 1",
        "en": "batch_size={batch_size} must be at least 1",
    },
    "rows_differ": {
        "zh": "x 有 {x_rows} 行，而 y 有 {y_rows} 行；两者必须一致",
        "en": "x has {x_rows} rows but y has {y_rows}; they must match",
    },
    "rank_out_of_range": {
        "zh": "rank={rank} 必须在 [0, {last}] 之内（world_size={world_size}）",
        "en": "rank={rank} must lie in [0, {last}] for world_size={world_size}",
    },
    "batch_not_divisible": {
        "zh": "batch_size={batch_size} 不能被 world_size={world_size} 整除：每个 rank 必须分到"
              "同样多的行。请用 {world_size} 的倍数作为 batch_size（例如 {example}）。",
        "en": "batch_size={batch_size} is not divisible by world_size={world_size}: every rank "
              "must get the same number of rows. Use a batch_size that is a multiple of "
              "{world_size} (e.g. {example}).",
    },
    # --- labs.reference -----------------------------------------------------------------------
    "unknown_optimizer": {
        "zh": "optimizer={name!r} 未知；请用 'adamw' 或 'sgd'",
        "en": "optimizer={name!r} is unknown; use 'adamw' or 'sgd'",
    },
    "steps_too_small": {
        "zh": "steps={steps} 至少要为 1",
        "en": "steps={steps} must be at least 1",
    },
    "vocab_too_small": {
        "zh": "config.vocab_size={vocab_size} 小于语料的词表（{corpus_vocab} 个字符）；"
              "请用 vocab_size={corpus_vocab}",
        "en": "config.vocab_size={vocab_size} is smaller than the corpus vocabulary "
              "({corpus_vocab} characters); use vocab_size={corpus_vocab}",
    },
    # --- labs.numerics: the tolerance policy --------------------------------------------------
    "no_tolerance": {
        "zh": "dtype {dtype!r} 没有对应的容差；请用其中之一：{choices}",
        "en": "no tolerance for dtype {dtype!r}; use one of {choices}",
    },
    "at_path": {
        "zh": "{path}：",
        "en": "{path}: ",
    },
    "with_context": {
        "zh": "{msg}：{why}",
        "en": "{msg}: {why}",
    },
    "expected_type": {
        "zh": "{where}期望 {expected}，实际是 {actual}",
        "en": "{where}expected {expected}, got {actual}",
    },
    "expected_mapping": {
        "zh": "{where}期望一个映射（mapping），实际是 {actual}",
        "en": "{where}expected a mapping, got {actual}",
    },
    "keys_differ": {
        "zh": "{where}键不一致：缺少 {missing}，多出 {extra}",
        "en": "{where}keys differ: missing {missing}, extra {extra}",
    },
    "expected_sequence": {
        "zh": "{where}期望一个 {expected}，实际是 {actual}",
        "en": "{where}expected a {expected}, got {actual}",
    },
    "length_differs": {
        "zh": "{where}长度为 {actual}，期望 {expected}",
        "en": "{where}length {actual}, expected {expected}",
    },
    "value_differs": {
        "zh": "{where}期望 {expected!r}，实际是 {actual!r}",
        "en": "{where}expected {expected!r}, got {actual!r}",
    },
    "float_differs": {
        "zh": "{where}期望 {expected!r}，实际是 {actual!r}：|差值| {difference:.3g} > 允许的 "
              "{allowed:.3g}（{dtype}：rtol={rtol:g}，atol={atol:g}）",
        "en": "{where}expected {expected!r}, got {actual!r}: |difference| {difference:.3g} > "
              "{allowed:.3g} allowed ({dtype}: rtol={rtol:g}, atol={atol:g})",
    },
    "typed_value_differs": {
        "zh": "{where}期望 {expected_type} {expected!r}，实际是 {actual_type} {actual!r}",
        "en": "{where}expected {expected_type} {expected!r}, got {actual_type} {actual!r}",
    },
}

#: The texts of MESSAGES shorter than 20 characters (English) that are complete labels: shown
#: alone or in front of a colon, never spliced into a sentence (issue 38;
#: tests/labs/messages/test_messages.py counts the short texts not listed here).
LABELS = frozenset({
    "gradient_of",  # numerics.assert_close's msg: the label in front of "{msg}: {why}"
    # a label, its colon, then the whole mismatch (numerics._mismatch): "[2]['w']: expected ..."
    "at_path", "with_context",
})
