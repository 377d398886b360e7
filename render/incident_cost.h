/* report incident's "What this incident cost" section (render/incident.c calls it). */
#ifndef BEDTOP_RENDER_INCIDENT_COST_H
#define BEDTOP_RENDER_INCIDENT_COST_H
#include "core/recording.h"
#include "core/reportcalc.h"
#include "core/util.h"

/* The window's spend at list prices per route (the biggest first) and in total. */
void bt_incident_cost_md(const struct bt_incident *inc, const struct bt_replay *rp,
                         struct bt_buf *b);
#endif
