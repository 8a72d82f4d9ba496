"""Transition only: the old home of the app's session state, split by job into
`session` (keys, bound widgets), `backend_state` (LLM, embedder), `memory_state` (memory
folders), `recording_state` (recordings, demo questions), `param_widgets` (method parameters)
and `job_owner` (jobs per browser session).

Re-exports the old names for the views that still import them (ask_views, compare_views,
learn_views, eval_views, which other branches are moving); new code imports the modules above.
Delete this file once nothing imports it. Monkeypatching a name here changes nothing.
"""

from __future__ import annotations

from memrag.app.backend_state import (backend_choice, embedder, embedder_id, extract_parallel, forget_failed_preload,
                                      job_llm, preload_model, settings)
from memrag.app.job_owner import session_id, start_job, visible_jobs
from memrag.app.memory_state import (active_memory, is_sample, memories_dir, memory_label, memory_path, open_memory,
                                     read_upload_batch, safe_memory_name, sample_memory_dir, saved_memories)
from memrag.app.param_widgets import (METHOD_LABELS, PARAM_CLASSES, changed_params, method_params, param_key,
                                      param_widgets, set_method_params, value_key)
from memrag.app.recording_state import demo_questions, recordings
from memrag.app.session import TEST_EMBEDDER_KEY, TEST_LLM_KEY, AppState, SessionKey, _Key, bound

__all__ = ["AppState", "SessionKey", "_Key", "TEST_LLM_KEY", "TEST_EMBEDDER_KEY", "METHOD_LABELS", "PARAM_CLASSES",
           "settings", "backend_choice", "job_llm", "embedder", "embedder_id", "extract_parallel", "preload_model",
           "forget_failed_preload", "safe_memory_name", "memories_dir", "memory_path", "sample_memory_dir",
           "is_sample", "saved_memories", "memory_label", "open_memory", "active_memory", "read_upload_batch",
           "recordings", "demo_questions", "param_widgets", "method_params", "set_method_params", "changed_params",
           "bound", "value_key", "param_key", "session_id", "start_job", "visible_jobs"]
