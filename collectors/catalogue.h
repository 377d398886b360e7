/* The model catalogue from the Bedrock control plane (REST-JSON, SigV4 service
 * "bedrock"), per (profile, Region) of the configured routes, at start and daily:
 *   GET /inference-profiles?type=SYSTEM_DEFINED  ListInferenceProfiles: confirms each
 *       route's geographic or global prefix (recognised by pattern, core/model.h);
 *   GET /foundation-models                       ListFoundationModels: each model's
 *       modelLifecycle (ACTIVE / LEGACY, legacyTime, publicExtendedAccessTime,
 *       endOfLifeTime), for `lifecycle` in the JSON and LEGACY_MODEL.
 * What is learned reaches the routes as typed settings (BT_SET_PROFILE,
 * BT_SET_LIFECYCLE), so a recording carries it and a replay knows it. A refusal
 * (AccessDenied) or a failure is a note on the routes, never a collector error:
 * the figures do not depend on it. */
#ifndef BEDTOP_CATALOGUE_H
#define BEDTOP_CATALOGUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collectors/collector.h"

extern const struct bt_collector_ops bt_catalogue_collector;

#define BT_CATALOGUE_EVERY 86400 /* seconds between a Region's readings: daily */

/* One model of a ListFoundationModels answer. */
struct bt_fmodel {
    char id[192];
    char status[12];         /* "ACTIVE", "LEGACY" (anything else is refused) */
    int64_t legacy_at, extended_at, eol_at; /* epoch s, 0 when not given */
};

/* Parses a ListFoundationModels answer ({"modelSummaries": [{"modelId", "modelLifecycle":
 * {"status", "legacyTime", "publicExtendedAccessTime", "endOfLifeTime"}}]}); calls fn
 * once per well-formed model. Times are ISO 8601 (the service model's timestampFormat)
 * or epoch seconds. False with err on a malformed answer. */
bool bt_fmodels_parse(const char *body, size_t len, void (*fn)(void *arg, const struct bt_fmodel *m),
                      void *arg, char *err, size_t errlen);
/* "legacy since 2026-03-01, public extended access from 2026-06-01, end of life
 * 2026-09-01": the dates a model's lifecycle gives ("" none). */
void bt_fmodel_dates(const struct bt_fmodel *m, char *out, size_t n);
#endif
