# Capture: the F32 model's greedy answers with top-20 lists (llama-server
# /completion, n_probs), then every setting read at each position of them
# by a one-token /completion of the prompt's tokens plus the answer so far.
import json, urllib.request, sys
def post(port, path, body):
    r = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(r, timeout=60))
K, N = 20, 24
prompts = [
  "Write a Python function that returns the n-th Fibonacci number.",
  "Give a JSON object with the fields name, age and city for a made-up person.",
  "Explain in three sentences why the sky is blue.",
  "Traduis en français : le chat dort sur le canapé.",
]
ports = {"f32": 18080, "q8_0": 18081, "q4_0": 18082}
def lists(cp):
    return [[{"id": a["id"], "logprob": a["logprob"]} for a in p["top_logprobs"]] for p in cp]
out = {"source": "llama-server b4748 (c392e509), CPU, the tiny test model with soft output logits (make_tiny.py with TINY_OUT_SCALE=0.05: the top token about 0.88, the rest spread) as F32, Q8_0 and Q4_0 (llama-quantize), -c 2048 -np 1; /completion with n_probs 20 at temperature 0", "k": K, "prompts": []}
for text in prompts:
    tmpl = post(18080, "/apply-template", {"messages": [{"role": "user", "content": text}]})["prompt"]
    ptoks = [t["id"] if isinstance(t, dict) else t for t in post(18080, "/tokenize", {"content": tmpl, "add_special": True})["tokens"]]
    ref = post(18080, "/completion", {"prompt": ptoks, "n_predict": N, "temperature": 0, "n_probs": K, "cache_prompt": False})
    cp = ref["completion_probabilities"]
    reftoks = [p["id"] for p in cp]
    entry = {"ref": reftoks, "base": lists(cp), "read": {}}
    for name, port in list(ports.items()) + [("f32_again", 18080)]:
        pos = []
        for i in range(len(reftoks)):
            r = post(port, "/completion", {"prompt": ptoks + reftoks[:i], "n_predict": 1, "temperature": 0, "n_probs": K})
            pos.append(lists(r["completion_probabilities"])[0])
        entry["read"][name] = pos
    out["prompts"].append(entry)
    print("prompt done", len(reftoks), file=sys.stderr)
json.dump(out, open(sys.argv[1], "w"), separators=(",", ":"))
