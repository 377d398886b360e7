/* Inside the recording format (man 5 bedtop-recording), shared by its writer
 * (core/recording.c), reader and index (core/recread.c), what the reader reads of
 * the lines (core/recload.c) and poll-line scanner (core/recscan.c). Not for views
 * or collectors: they use core/recording.h. */
#ifndef BEDTOP_RECFMT_H
#define BEDTOP_RECFMT_H
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/recording.h"

/* Event types as a recording names them, indexed by enum bt_event_type. */
#define BT_REC_NEVTYPES 6
extern const char *const bt_rec_ev_names[BT_REC_NEVTYPES];

/* Times in a file become int64_t: converting an infinite or huge double is
 * undefined behaviour (fuzzing found 1e999 here), so they go through the one
 * checked conversion (bt_f2i, core/plausible.h), bounded to |t| < 1e15.
 * bt_rec_time gives the time truncated toward zero; bt_rec_time_ok only checks. */
bool bt_rec_time(double t, int64_t *out);
bool bt_rec_time_ok(double t);

/* Bounds of the header (man 5 bedtop-recording): a route takes ~4 kB in memory
 * however short its text, so a reader takes at most BT_REC_MAX_ROUTES (the
 * largest configs tested hold 20,000); a member of the header or one route is at
 * most BT_REC_MAX_MEMBER bytes (a real route is a few hundred). */
#define BT_REC_MAX_ROUTES 20000
/* The most of a recording a replay holds and walks: the newest 16 days of its polls
 * (CloudWatch keeps one-minute data 15 days, and history is at most that). */
#define BT_REC_MAX_SPAN_DAYS 16
#define BT_REC_MAX_MEMBER 65536
/* 2.2: the most price rows a header's "prices" holds (data/prices.conf has ~50,
 * a Price List API cache a few hundred); each row is at most BT_REC_MAX_MEMBER */
#define BT_REC_MAX_PRICES 20000

/* The poll-line scanner.
 * Poll lines are most of a recording (a 24-hour, 200-route file is ~50 MB),
 * so the "s" arrays are read by a small hand-written scanner instead of a
 * cJSON tree per line (a 3-hour backfill line alone made a ~70 MB tree).
 * It accepts what cJSON accepts (numbers exactly as cJSON reads them) and
 * every other value, and the events, still go through cJSON. */

/* What a sample array holds: the minutes it spans (pass one sizes the store). */
struct bt_rec_span {
    int64_t min, max;        /* 0: no sample yet */
};

enum bt_rec_scan { BT_SCAN_OK, BT_SCAN_SYNTAX, BT_SCAN_BAD_GROUP };

/* One "s" array at p: [[route, minute, arrival, [signal, value, ...]], ...].
 * With rp NULL it only checks (and measures the minutes into span); with rp
 * the samples go into its store. *endp is set past the array. */
enum bt_rec_scan bt_rec_scan_samples(struct bt_replay *rp, int nroutes, const int *sigmap,
                                     const char *p, const char **endp, struct bt_rec_span *span);

/* An instant something read becomes visible at (bt_replay_quiet). */
void bt_rec_note_arrival(struct bt_replay *rp, int64_t a);

/* A poll line's parts, located and checked without touching the store. */
struct bt_rec_line {
    double t;
    const char *s;           /* the "s" array, NULL: none */
    const char *e, *e_end;   /* the "e" array, NULL: none */
    const char *c, *c_end;   /* 2.x: the "c" array of counter readings, NULL: none */
    const char *k, *k_end;   /* 2.x: the "k" array naming series, NULL: none */
    const char *v, *v_end;   /* 2.1: the "v" array of coverage records, NULL: none */
};

/* The header line read without one tree for all of it (issue 37: a 3.3 MB header
 * of 100,000 routes took 1.67 GB). bt_rec_scan_object calls each(arg, key, klen,
 * value, vend) for every member of the top-level object in line (key without its
 * quotes, not unescaped); bt_rec_scan_array calls each(arg, index, value, vend)
 * for every element of the array at p. Either stops when each returns false.
 * They return false when the text is not JSON (what follows the object is
 * ignored, as cJSON_Parse does). */
bool bt_rec_scan_object(const char *line,
                        bool (*each)(void *, const char *, size_t, const char *, const char *),
                        void *arg);
bool bt_rec_scan_array(const char *p, bool (*each)(void *, size_t, const char *, const char *),
                       void *arg);

/* Locates and checks a poll line's parts; false with the reason in why. */
bool bt_rec_scan_line(const char *line, int nroutes, const int *sigmap, struct bt_rec_line *pl,
                      struct bt_rec_span *span, char *why, size_t n);
/* What the reader reads of the lines (core/recload.c). bt_rec_parse_header reads
 * the header line into rp (its mode, start, config, routes and prices) and fills
 * sigmap[256], the file's signal indices as ours (-1: a name this reader does not
 * know); false with the reason in err. A poll line's arrays, each one cJSON tree:
 * "e" its events (into the store; markers kept), "k" the series names later rows
 * use, "v" (2.1) what each good poll asked for, "c" counter readings. */
bool bt_rec_parse_header(struct bt_replay *rp, const char *line, int *sigmap, char *err,
                         size_t errlen);
void bt_rec_load_events(struct bt_replay *rp, const cJSON *e);
void bt_rec_load_series(struct bt_replay *rp, const cJSON *k);
void bt_rec_load_coverage(struct bt_replay *rp, const cJSON *v, const int *sigmap);
void bt_rec_load_readings(struct bt_replay *rp, const cJSON *c, const int *sigmap);
/* The header's share settings (core/recshares.c): share_label, share_top_n and the
 * attribute_by tag, written with the thresholds and read back into cfg. */
void bt_rec_header_shares(cJSON *c, const struct bt_config *cfg);
void bt_rec_read_shares(const cJSON *c, struct bt_config *cfg);
/* The header's spend settings (core/recprices.c, 2.2): the spend keys of "config",
 * a route's tier, model_units and budget_usd_per_day, and "prices", the price rows
 * in effect; read back held to what the config takes. bt_rec_read_price appends one
 * row of "prices" to cfg's table: 1 taken, 0 skipped (a tier, endpoint or inference
 * type this reader does not know), -1 refused with the reason in why. */
void bt_rec_header_spend(cJSON *c, const struct bt_config *cfg);
void bt_rec_route_spend(cJSON *o, const struct bt_route *r);
cJSON *bt_rec_prices_json(const struct bt_config *cfg);
void bt_rec_read_spend(const cJSON *c, struct bt_config *cfg);
void bt_rec_read_route_spend(const cJSON *o, struct bt_route *r);
int bt_rec_read_price(const cJSON *o, struct bt_config *cfg, char *why, size_t n);
#endif
