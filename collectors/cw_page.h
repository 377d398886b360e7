/* A GetMetricData answer, one page at a time (collectors/cw_page.c): what a page
 * delivers, by callback, and its parser. */
#ifndef BEDTOP_CW_PAGE_H
#define BEDTOP_CW_PAGE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a GetMetricData page delivers, by callback. */
struct bt_cw_sink {
    void (*sample)(void *arg, const char *id, int64_t t, double v);
    /* a result whose StatusCode is not Complete (PartialData, InternalError, Forbidden) */
    void (*status)(void *arg, const char *id, const char *code, const char *detail);
    void (*message)(void *arg, const char *code, const char *value); /* top-level Messages */
    void *arg;
};
/* Parses one page; *next_token gets a malloc'd NextToken or NULL. On a
 * malformed body returns false with err set (nothing half-delivered is lost:
 * samples already delivered stay valid minutes). */
bool bt_cloudwatch_parse_page(const char *body, size_t len, const struct bt_cw_sink *sink,
                              char **next_token, char *err, size_t errlen);
#endif
