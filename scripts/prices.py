#!/usr/bin/env python3
"""Generate src/spend/prices.json, baton's price table, from LiteLLM's list.

The ecosystem already keeps a price list per provider and model: LiteLLM's
`model_prices_and_context_window.json` (ccusage and other usage tools read
it). baton does not keep its own by hand; it keeps the providers its agents
use (PROVIDERS below), one entry per model id, in USD per million tokens.

Get the list from PyPI (no other network):

    pip download litellm --no-deps -d /tmp/litellm
    scripts/prices.py /tmp/litellm/litellm-*.whl > src/spend/prices.json

The argument is the wheel (the list and LiteLLM's version are read from it)
or the JSON file itself (then give --version). `--as-of` dates the table
(default: today, UTC). Review the diff, run `cargo test --lib spend::prices`
(every model of baton's alias table must have a price), commit.

Output: one JSON object, one model per line (small diffs):
  {"as_of": ..., "source": ..., "models": [[provider, model, input, cached_input, output], ...]}
"""

import argparse
import datetime
import json
import re
import sys
import zipfile

LIST = "litellm/model_prices_and_context_window_backup.json"

# LiteLLM provider → the provider name baton shows, in order of preference:
# where two providers list the same model id, the first one's price is kept
# (the model's maker's own API before a cloud that resells it).
PROVIDERS = [
    ("openai", "openai"),  # codex, and pi/opencode with openai
    ("anthropic", "anthropic"),  # claude, and pi/opencode with anthropic
    ("gemini", "google"),  # agy, gemini-cli (Google AI Studio)
    ("vertex_ai-language-models", "google"),  # the same models on Vertex AI
    ("zai", "zai"),  # zai (pi --provider zai)
    ("dashscope", "alibaba"),  # qwen with an Alibaba Cloud (DashScope) key
]

MODES = {"chat", "responses"}

# Model ids baton's alias table resolves to that LiteLLM has no entry for,
# each priced as a model LiteLLM does list. Kept by hand: say why, and where
# the figure comes from. `tests` in src/spend/prices.rs fails when an alias
# target has no price, so a new alias lands here or in LiteLLM first.
SAME_AS = {
    # agy's `pro` alias (models::table, Agent::Gemini) names the GA id; LiteLLM
    # lists only the preview (gemini/gemini-3.1-pro-preview). Google lists one
    # price for both.
    "gemini-3.1-pro": "gemini-3.1-pro-preview",
    # claude's own aliases, which baton passes through unchanged (claude
    # resolves each to the newest model of the family: its transcripts report
    # `claude-opus-5-5` for `opus`). The figure is LiteLLM's price of that
    # newest model; claude reports each call's cost itself, so these only
    # tell `--max-usd` and `baton agents` that the alias is priced.
    "fable": "claude-fable-5-1",
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
}


def per_million(x):
    # 6 decimals: LiteLLM's per-token floats (2.0000000000000002e-07) read
    # back as the list price they are (0.2).
    return round(float(x) * 1_000_000, 6)


def load(path, version):
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read(LIST))
            meta = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
            if meta:
                for line in z.read(meta[0]).decode().splitlines():
                    if line.startswith("Version: "):
                        version = line.split(": ", 1)[1].strip()
                        break
        return data, version
    with open(path) as f:
        return json.load(f), version


def priced(entry):
    """(input, cached_input, output) per million, or None without a flat price."""
    if not isinstance(entry, dict) or entry.get("mode") not in MODES:
        return None
    i, o = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not isinstance(i, (int, float)) or not isinstance(o, (int, float)):
        return None
    # Free (experimental) entries would make --max-usd count nothing: such a
    # model stays unpriced, and the user may price it in the config.
    if i <= 0 or o <= 0:
        return None
    c = entry.get("cache_read_input_token_cost")
    # No published cache rate (or 0): the input rate, an estimate that errs high.
    if not isinstance(c, (int, float)) or c <= 0:
        c = i
    return per_million(i), per_million(c), per_million(o)


def build(data):
    models = {}
    order = []
    for provider, shown in PROVIDERS:
        for key, entry in data.items():
            if not isinstance(entry, dict) or entry.get("litellm_provider") != provider:
                continue
            if key.startswith("ft:"):
                continue
            # baton looks a model up by its last path segment (opencode's
            # `openai/gpt-5.4`), so the table holds that.
            model = key.rsplit("/", 1)[-1].lower()
            if not re.fullmatch(r"[a-z0-9][a-z0-9._:@+-]*", model) or model in models:
                continue
            p = priced(entry)
            if p is None:
                continue
            models[model] = [shown, model, *p]
            order.append(model)
    for alias, target in SAME_AS.items():
        if alias in models:
            # LiteLLM lists it now: its own entry wins, drop ours.
            print(f"note: LiteLLM lists {alias}; SAME_AS entry unused", file=sys.stderr)
            continue
        if target not in models:
            sys.exit(f"SAME_AS: {alias} -> {target}, which the list does not price")
        row = list(models[target])
        row[1] = alias
        models[alias] = row
        order.append(alias)
    # A dated snapshot at its base model's price adds nothing: lookup finds
    # the base for it (`gpt-5.4-2026-03-05` → `gpt-5.4`), and a user's price
    # for the base then covers the snapshot too.
    def redundant(m):
        base = re.sub(r"-(\d{4}-\d{2}-\d{2}|\d{8})$", "", m)
        return base != m and base in models and models[base][2:] == models[m][2:]

    order = [m for m in order if not redundant(m)]
    return [models[m] for m in sorted(order, key=lambda m: (models[m][0], m))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("list", help="the litellm wheel, or its JSON price list")
    ap.add_argument("--version", default="unknown", help="LiteLLM's version (for a JSON file)")
    ap.add_argument("--as-of", default=datetime.datetime.now(datetime.timezone.utc).date().isoformat())
    a = ap.parse_args()
    data, version = load(a.list, a.version)
    rows = build(data)
    providers = ", ".join(sorted({p for _, p in PROVIDERS}))
    out = {
        "as_of": a.as_of,
        "source": f"LiteLLM {version}, {LIST.rsplit('/', 1)[-1]} ({providers}: the providers' "
        "list prices, standard tier, USD per million tokens), generated by scripts/prices.py",
        "models": rows,
    }
    lines = ["{"]
    lines.append(f'"as_of": {json.dumps(out["as_of"])},')
    lines.append(f'"source": {json.dumps(out["source"])},')
    lines.append('"models": [')
    lines.append(",\n".join(json.dumps(r) for r in rows))
    lines.append("]}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
