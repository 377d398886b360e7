/* Times as users type them, one meaning everywhere (core/when.c). */
#ifndef BEDTOP_WHEN_H
#define BEDTOP_WHEN_H
#include <stdbool.h>
#include <stdint.h>

/* "14:32" (UTC, on the day nearest rel, else start, that falls in [start, end]),
 * "-30m"/"+5m" (relative to rel), an ISO time, or epoch seconds. */
bool bt_parse_when(const char *s, int64_t start, int64_t end, int64_t rel, int64_t *out);
#endif
