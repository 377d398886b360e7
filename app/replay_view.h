/* bedtop replay FILE: the dashboard driven by recorded time (play, pause,
 * step, speed, go to, next/previous warning, markers, a timeline). */
#ifndef BEDTOP_APP_REPLAY_VIEW_H
#define BEDTOP_APP_REPLAY_VIEW_H
#include "app/app.h"
#include "core/recording.h"

/* Runs the interactive replay of an opened recording; returns the exit code. */
int replay_view_run(struct app_opts *o, struct bt_replay *rp);
#endif
