/*
 * model.c -- lifecycle of the data-model structs (see model.h).
 */
#include "domain/model.h"
#include "domain/item_texts.h"

#include <stdlib.h>
#include <string.h>

void space_release(struct space *sp)
{
	free(sp->id);
	free(sp->name);
	free(sp->description);
	free(sp->created_at);
	free(sp->head);
	free(sp->deleted_at);
	memset(sp, 0, sizeof(*sp));
}

void checkpoint_init(struct checkpoint *c)
{
	memset(c, 0, sizeof(*c));
	c->decisions = json_array();
	c->assumptions = json_array();
	c->tasks = json_array();
	c->open_questions = json_array();
	c->entities = json_array();
	c->artifacts = json_array();
	c->metadata = json_object();
}

void checkpoint_release(struct checkpoint *c)
{
	free(c->hash);
	free(c->parent_hash);
	free(c->merge_parent_hash);
	free(c->space);
	free(c->title);
	free(c->summary);
	json_decref(c->decisions);
	json_decref(c->assumptions);
	json_decref(c->tasks);
	json_decref(c->open_questions);
	json_decref(c->entities);
	json_decref(c->artifacts);
	json_decref(c->metadata);
	free(c->author);
	free(c->created_at);
	item_texts_unref(c->texts);
	memset(c, 0, sizeof(*c));
}

void session_release(struct session *s)
{
	free(s->id);
	free(s->repo_id);
	free(s->title);
	free(s->mounted_hash);
	free(s->forked_from);
	free(s->created_at);
	memset(s, 0, sizeof(*s));
}

void turn_release(struct turn *t)
{
	free(t->session_id);
	free(t->role);
	free(t->content);
	free(t->provider);
	free(t->model);
	free(t->error);
	free(t->status);
	free(t->created_at);
	free(t->author);
	memset(t, 0, sizeof(*t));
}

void generation_release(struct generation *g)
{
	free(g->id);
	free(g->session_id);
	free(g->status);
	free(g->provider);
	free(g->model);
	free(g->error);
	free(g->created_at);
	free(g->finished_at);
	free(g->owner);
	memset(g, 0, sizeof(*g));
}

void draft_job_release(struct draft_job *j)
{
	free(j->id);
	free(j->session_id);
	free(j->provider);
	free(j->model);
	free(j->result);
	free(j->error);
	free(j->created_at);
	free(j->started_at);
	free(j->finished_at);
	free(j->owner);
	memset(j, 0, sizeof(*j));
}

void spaces_free(struct space *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		space_release(&v[i]);
	free(v);
}

void checkpoints_free(struct checkpoint *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		checkpoint_release(&v[i]);
	free(v);
}

void sessions_free(struct session *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		session_release(&v[i]);
	free(v);
}

void turns_free(struct turn *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		turn_release(&v[i]);
	free(v);
}

static const char *const job_names[] = { "queued", "running", "done", "failed" };

const char *job_status_name(enum job_status s)
{
	return job_names[s];
}

int job_status_parse(const char *s, enum job_status *out)
{
	for (size_t i = 0; i < sizeof(job_names) / sizeof(job_names[0]); i++) {
		if (!strcmp(s, job_names[i])) {
			*out = (enum job_status)i;
			return 0;
		}
	}
	return -1;
}

void reflog_entry_release(struct reflog_entry *e)
{
	free(e->space_id);
	free(e->space_name);
	free(e->old_hash);
	free(e->new_hash);
	free(e->action);
	free(e->actor);
	free(e->reason);
	free(e->created_at);
	memset(e, 0, sizeof(*e));
}

void handoff_release(struct handoff *h)
{
	free(h->space_id);
	free(h->hash);
	free(h->note);
	free(h->author);
	free(h->created_at);
	memset(h, 0, sizeof(*h));
}

void reflog_entries_free(struct reflog_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		reflog_entry_release(&v[i]);
	free(v);
}
