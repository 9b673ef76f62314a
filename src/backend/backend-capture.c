/* When a device backend may replay a recorded run (a CUDA graph), and when
 * it must record again: plain logic over what the recording baked in, so
 * that it is tested on machines without a GPU. */
#include "config.h"

#include <stddef.h>

#include "st-backend.h"

const char *
st_capture_stale(const st_capture_key *was, const st_capture_key *now)
{
	if (was->device != now->device)
		return "another device";
	if (was->gen.build != now->gen.build)
		return "the plan was rebuilt (new input sizes)";
	if (was->gen.weights != now->gen.weights)
		return "weights were bound again";
	if (was->gen.runtime != now->gen.runtime)
		return "a runtime option changed";
	if (was->arena != now->arena)
		return "the arena moved";
	if (was->scratch != now->scratch)
		return "the scratch area moved";
	if (was->staging != now->staging)
		return "the staging buffers moved";
	return NULL;
}

/* Whether a run under now would be the first of its plan build on its
 * device: new shapes mean new algorithm searches and kernels loaded for
 * the first time, which must not happen inside a recording. */
static bool
needs_warm_up(const st_capture_state *s, const st_capture_key *now)
{
	return !s->seen || s->last.device != now->device || s->last.gen.build != now->gen.build;
}

st_capture_action
st_capture_next(st_capture_state *s, const st_capture_key *now, const char **why)
{
	const char *reason = "";
	st_capture_action action;
	if (now->profiling || now->one_off) {
		/* Timing events between the steps, or values set for one run
		 * only: launched as they are, the recording (if any) kept. */
		reason = now->profiling ? "a profiled run" : "a one-off run";
		action = ST_CAPTURE_EAGER;
	} else {
		const char *stale = s->recorded ? st_capture_stale(&s->key, now) : NULL;
		if (s->recorded && stale == NULL) {
			action = ST_CAPTURE_REPLAY;
		} else {
			if (s->recorded) {
				s->recorded = false;
				reason = stale;
			}
			if (needs_warm_up(s, now)) {
				action = ST_CAPTURE_EAGER;
			} else {
				action = ST_CAPTURE_RECORD;
				s->recorded = true;
				s->key = *now;
				s->records++;
			}
		}
	}
	s->seen = true;
	s->last = *now;
	if (why != NULL)
		*why = reason;
	return action;
}
