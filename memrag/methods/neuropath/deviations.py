"""Where memrag's NeuroPath departs from its paper (or released code), as data."""

from __future__ import annotations

from memrag.methods.paper_kit import Deviation

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation("neuropath", "Where the valid paths' chunks go (dp_position)",
              "D_p (chunks of the last hop's valid paths) first, then the completion ranking",
              "dp_position='fused' (default): reciprocal-rank fusion (dp_fusion_k 5) of the path order and "
              "the completion rank, so a path chunk completion also ranks high leads, with a floor: the i-th "
              "chunk of D_p ranks no lower than after dp_head (2) completion chunks and D_p's first i - 1; "
              "'first' is the paper's order, 'interleave' alternates completion and D_p, 'after_head' puts "
              "D_p after the first dp_head completion chunks",
              "a 1.5B tracker marks most listed paths valid, so D_p first lets its noise decide R@2; placed "
              "by evidence, R@2 rose on both selection sets (sample 49.2 -> 58.3, MuSiQue 31-60 45.3 -> 48.1). "
              "The floor (2026-12-02) keeps fusion from burying a kept passage below completion's head by "
              "the path list's 'past the end' score (the CARICOM question: rank 19 -> 3); R@2 is unchanged by "
              "construction, R@5 moved -3.8 / +3.9 / -0.3 points (sample / MuSiQue 31-60 / 1-30, replayed). Against the paper's "
              "order again (2026-12-07, replayed, no model): R@2 / R@5 fused 58.8 / 87.5, 53.3 / 67.5 and 50.6 / "
              "74.4 against first 57.5 / 86.2, 52.5 / 65.8 and 48.6 / 72.2 (sample, MuSiQue 31-60, 1-30)"),
    Deviation("neuropath", "What a tracking prompt after hop 1 carries (hop_prompt; an option, off)",
              "the question and the listed paths only",
              "hop_prompt='paths' (default since 2026-12-02) is the official shape; 'carry', memrag's earlier "
              "default, also carries the previous hop's reasoning chain ('So far') and expansion requirement "
              "('Still missing'). Either way a hop that repeats the previous chain and requirement word for "
              "word is flagged in the trace",
              "carrying had no measured reason: the 1.5B model copied the carried text (hop 2 repeated hop 1's "
              "chain and requirement in 9 of 16, 10 of 15 and 7 of 12 two-hop runs on MuSiQue 31-60, 1-30 and "
              "the sample; 0 of 16 without it), and the official shape moved R@2 / R@5 by +1.1 / +2.8 points "
              "(MuSiQue 31-60) and -1.2 / -1.7 (sample), intervals across zero"),
    Deviation("neuropath", "Class words seed nothing (skip_class_words)",
              "every query entity seeds its nearest graph node",
              "skip_class_words=True (default): a query entity written all in lower case ('country', "
              "'director', 'city of birth') names a kind, not an entity, and seeds nothing; the seed record says "
              "so",
              "9 of 116 seed links on MuSiQue 1-60 were class words, most at similarity 1.0 to a node of the "
              "same word, starting paths from every country or city the memory mentions; skipping them moved "
              "R@2 / R@5 by +2.5 / +3.3 points (MuSiQue 31-60) and +4.2 / +2.5 (sample), no question worse at "
              "R@5 on the sample"),
    Deviation("neuropath", "Weak seed links seed nothing (seed_floor)",
              "every query entity seeds its nearest graph node, however far",
              "seed_floor=0.7 (default since 2026-12-02, a later session): a query entity whose nearest graph "
              "node has cosine similarity below 0.7 seeds nothing; the seed record says so, and a question "
              "left without seeds is answered by completion (dense) alone",
              "on the selection sets' traces (sample, MuSiQue 31-60), 5 of the 7 seed links below 0.7 named "
              "another thing ('Newspaper Editor' -> 'mayor' 0.37, 'Commodore' -> 'bays' 0.51, 'Halvorsen Prize' "
              "-> 'Adam Smith Prize' 0.53) while every link from 0.7 to 0.85 was the same thing under a longer "
              "name; 0.7 moved R@2 / R@5 / EM by -0.8 / +4.2 / +10.0 (sample) and 0 / 0 (MuSiQue 31-60), "
              "0.8 cost R@2 -1.7 on 31-60 by dropping such longer names; measured once on MuSiQue 1-30: "
              "+1.9 / +0.6 / +3.3"),
    Deviation("neuropath", "Coreference set size",
              "the official code searches k = 5 including the node itself (at most 4 others)",
              "coref_top counts other nodes only (5 others by default)",
              "a parameter named 'top 5' should mean five candidates"),
    Deviation("neuropath", "Path vectors for pruning",
              "the text of each candidate path is embedded",
              "a path's vector is the normalised sum of its triples' stored vectors",
              "keeps query-time work to dot products; stated in every trace"),
    Deviation("neuropath", "Tracking failure",
              "the official code drops every kept path when the tracker's reply cannot be read",
              "tracking stops, the paths kept so far count as valid, completion still runs",
              "one unreadable reply from a small model should not erase the evidence found so far"),
    Deviation("neuropath", "Optional extras (off by default)",
              "not in the paper",
              "force_hops, verbatim_seeds and expand_kept parameters",
              "failure modes seen with a 1.5B tracker: early stops, missed names, expand_ids no better "
              "than list order (expand_kept lists more gold on MuSiQue 31-60 but lowers R@2: docs/results.md)"),
    Deviation("neuropath", "Judging paths by likelihood (tracker, an option pending measurement)",
              "one generative call per hop writes valid_ids, the paths that help, most helpful first",
              "tracker='likelihood' (default 'generative' until measured): each new listed path is judged alone by "
              "P('yes') to 'does this path help answer the question?' (one one-token call per new path, shared "
              "prompt prefix); kept = P ≥ keep_threshold (0.5), most probable first, at most keep_top (10); the "
              "chain, requirement, continue and the number of paths to expand stay generative, the most probable "
              "kept new paths are the ones expanded; a backend without probabilities falls back, said in the trace",
              "on the committed MuSiQue recordings the 1.5B model's valid_ids are runs of the listing order "
              "(3+ consecutive ids in 26 and 28 of 46 calls; kept-path gold precision 0.65 / 0.60 against 0.70 / "
              "0.60 for the same number taken from the top of the list), while a perfect chooser over the same "
              "listed paths reaches R@2 63.3 (dense 55.0). Off by default: on hop 1 (bench/tracker_hop1_probe.py) "
              "the 1.5B model's P('yes') puts gold-touching paths above the others at 0.54 / 0.64 (sample / "
              "MuSiQue 31-60) against the listing order's 0.81 / 0.72"),
    Deviation("neuropath", "New paths always listed by similarity to the goal",
              "the official code sorts a hop's new paths by similarity to the goal only when there are more "
              "than 30 to prune; 30 or fewer are listed in the order they were made",
              "every hop's new paths are listed best first by similarity to the goal (ties in creation order), "
              "whatever their number",
              "one listing rule, so list position means one thing in the trace and in tracker precision; "
              "~80 % of hops on MuSiQue have 30 or fewer new paths, so the tracker sees an ordered list the "
              "paper's would not (its 'top of the list' baseline is a pruning-score baseline)"),
    Deviation("neuropath", "The tracker's prompt and schema",
              "the paper's and the official code's path-tracking prompt and JSON reply format",
              "memrag's own words for the tracking prompt and its JSON schema (reasoning_chain, valid_ids, "
              "expansion_requirement, expand_ids, continue), and for the likelihood tracker's one-path "
              "yes/no question; all in memrag/prompts.py",
              "a schema-constrained reply a 1.5B model can fill; the fields carry the paper's meaning, "
              "the wording is not the paper's"),
    Deviation("neuropath", "Kept paths capped at 10 (keep_top)",
              "the paper's tracker keeps whatever valid_ids it writes",
              "with tracker='likelihood', at most keep_top (10) kept paths per hop, most probable first; "
              "keep_top=None lifts the cap",
              "10 is the generative reply's own cap on valid_ids, so both trackers keep at most as many; the "
              "cap bound in 6 of 28, 10 of 42 and 12 of 40 likelihood judgements (sample, MuSiQue 31-60, 1-30)"),
    Deviation("neuropath", "Seed links per query entity (seed_top; an option, 1 = the paper)",
              "every query entity seeds its one nearest graph node",
              "seed_top=k links each query entity to its k nearest graph nodes; each link is held to seed_floor "
              "on its own, and a link beyond the nearest only if the names nest (one's words all in the "
              "other's: 'Nets' -> 'New York Nets'); the seed table records each link's rank. Default 1",
              "measured as the reach lever of issue 37 and not chosen: the 3 nearest nodes without the nesting "
              "rule linked siblings ('26th Chess Olympiad' -> '36th Chess Olympiad' 0.97, 'AD 43' -> 'AD 41' "
              "0.92) and moved NeuroPath's R@2 / R@5 by +2.5 / -2.5 (sample, EM -5.0) and -1.7 / -1.9 (MuSiQue "
              "31-60); with the rule, +2.5 / -2.5 and -1.7 / 0.0; measured once on MuSiQue 1-30: -3.3 / 0.0, "
              "EM 0.0, gold within 2 hops of a seed 46 -> 47 of 71 (docs/runs/musique-pooled-1-30-reach)"),
)
