/*
 * sandcast-gateway: the in-sandbox end of the host bridge (docs/spec/bridge-frames.md).
 *
 *   sandcast-gateway duplex --port P --nonce HEX32 [limits]   requests out as duplex_v1 frames on
 *                                                              stdout, responses in on stdin
 *   sandcast-gateway queue --port P [--spool DIR] [--daemon] [limits]
 *                                                              requests out as queue_v1 spool files
 *   sandcast-gateway wait [--spool DIR] [--max N] [--wait-ms T]
 *                                                              (host, through exec) claims pending
 *                                                              requests into work/ and prints their
 *                                                              ids; blocks until one exists
 *   sandcast-gateway commit [--spool DIR] -- ID...             (host, through exec) publishes the
 *                                                              answers res/.<ID>.tmp as res/<ID>.json
 *   sandcast-gateway request [-X M] [-H 'k: v'] [-d DATA] [-i] PATH
 *                                                              a tiny HTTP client for
 *                                                              $SANDCAST_BRIDGE_URL (images without curl)
 *   sandcast-gateway decode                                     test mode: decodes stdin as frames and
 *                                                              prints {"frame":..} / {"error":code}
 *
 * Limits: --max-body (1 MiB), --max-conns (64), --wait-ms (35000), --heartbeat-ms (5000),
 * --max-depth (64, queue). Everything that reaches this program is untrusted input: the HTTP side
 * comes from sandbox processes, and the program itself runs inside the sandbox. It never trusts a
 * length it did not bound, never blocks on one peer, and answers garbage with a 4xx.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME (2u * 1024u * 1024u)
#define MAX_ID 256
#define MAX_HEAD 16384
#define MAX_HEADERS 100
#define MAX_SKIP_BEFORE_READY 8192
#define MAX_OUTQ (16u * 1024u * 1024u)
#define JSON_DEPTH 64

/* ---------- growable byte buffer ---------- */
typedef struct { char *p; size_t n, cap; } buf_t;
static void die_oom(void) { static const char m[] = "sandcast-gateway: out of memory\n"; (void)!write(2, m, sizeof m - 1); _exit(70); }
static void b_reserve(buf_t *b, size_t more) {
  if (b->n + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->n + more) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) die_oom();
  b->p = p; b->cap = cap;
}
static void b_put(buf_t *b, const void *d, size_t n) { b_reserve(b, n); memcpy(b->p + b->n, d, n); b->n += n; }
static void b_str(buf_t *b, const char *s) { b_put(b, s, strlen(s)); }
static void b_ch(buf_t *b, char c) { b_put(b, &c, 1); }
static void b_free(buf_t *b) { free(b->p); b->p = NULL; b->n = b->cap = 0; }
static void b_drop(buf_t *b, size_t n) { memmove(b->p, b->p + n, b->n - n); b->n -= n; }

static int64_t now_ms(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) { if (errno == EINTR) continue; if (errno == EAGAIN) { struct pollfd f = {fd, POLLOUT, 0}; poll(&f, 1, 1000); continue; } return -1; }
    p += w; n -= (size_t)w;
  }
  return 0;
}

/* ---------- base64 ---------- */
static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static void b64_encode(buf_t *out, const unsigned char *s, size_t n) {
  b_reserve(out, (n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
    b_ch(out, B64[v >> 18 & 63]); b_ch(out, B64[v >> 12 & 63]);
    b_ch(out, i + 1 < n ? B64[v >> 6 & 63] : '='); b_ch(out, i + 2 < n ? B64[v & 63] : '=');
  }
}
static int b64v(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
/* Strict standard base64 (padding optional); -1 on anything else. */
static int b64_decode(buf_t *out, const char *s, size_t n) {
  while (n > 0 && s[n - 1] == '=') n--;
  if (n % 4 == 1) return -1;
  unsigned acc = 0; int bits = 0;
  for (size_t i = 0; i < n; i++) {
    int v = b64v(s[i]);
    if (v < 0) return -1;
    acc = acc << 6 | (unsigned)v; bits += 6;
    if (bits >= 8) { bits -= 8; b_ch(out, (char)(acc >> bits & 0xff)); }
  }
  return 0;
}

/* ---------- JSON: a bounded parser into a small tree ---------- */
enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
typedef struct jv {
  int t; double num; int boolean;
  char *s; size_t slen;            /* J_STR: decoded UTF-8 */
  struct jv **items; char **keys; size_t *klens; size_t count; /* J_ARR / J_OBJ */
} jv;
typedef struct { const unsigned char *p, *end; int depth; } jp;

static void jfree(jv *v) {
  if (!v) return;
  for (size_t i = 0; i < v->count; i++) { jfree(v->items[i]); if (v->keys) free(v->keys[i]); }
  free(v->items); free(v->keys); free(v->klens); free(v->s); free(v);
}
static void ws(jp *j) { while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++; }
static void utf8_put(buf_t *b, unsigned cp) {
  if (cp < 0x80) b_ch(b, (char)cp);
  else if (cp < 0x800) { b_ch(b, (char)(0xc0 | cp >> 6)); b_ch(b, (char)(0x80 | (cp & 63))); }
  else if (cp < 0x10000) { b_ch(b, (char)(0xe0 | cp >> 12)); b_ch(b, (char)(0x80 | (cp >> 6 & 63))); b_ch(b, (char)(0x80 | (cp & 63))); }
  else { b_ch(b, (char)(0xf0 | cp >> 18)); b_ch(b, (char)(0x80 | (cp >> 12 & 63))); b_ch(b, (char)(0x80 | (cp >> 6 & 63))); b_ch(b, (char)(0x80 | (cp & 63))); }
}
/* One UTF-8 sequence at p (well-formed per RFC 3629); its length, or 0 when ill-formed. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || (size_t)(end - p) < n) return 0;
  for (size_t i = 1; i < n; i++) if ((p[i] & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && p[1] < 0xa0) return 0;
  if (c == 0xed && p[1] >= 0xa0) return 0;
  if (c == 0xf0 && p[1] < 0x90) return 0;
  if (c == 0xf4 && p[1] >= 0x90) return 0;
  return n;
}
static int hex4(const unsigned char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0'; else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10; else return -1;
  }
  *out = v; return 0;
}
static int jstring(jp *j, buf_t *b) {
  if (j->p >= j->end || *j->p != '"') return -1;
  j->p++;
  while (j->p < j->end) {
    unsigned c = *j->p;
    if (c == '"') { j->p++; return 0; }
    if (c < 0x20) return -1;
    if (c == '\\') {
      if (j->end - j->p < 2) return -1;
      unsigned e = j->p[1]; j->p += 2;
      switch (e) {
        case '"': b_ch(b, '"'); break; case '\\': b_ch(b, '\\'); break; case '/': b_ch(b, '/'); break;
        case 'b': b_ch(b, '\b'); break; case 'f': b_ch(b, '\f'); break; case 'n': b_ch(b, '\n'); break;
        case 'r': b_ch(b, '\r'); break; case 't': b_ch(b, '\t'); break;
        case 'u': {
          unsigned cp;
          if (j->end - j->p < 4 || hex4(j->p, &cp)) return -1;
          j->p += 4;
          if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
            unsigned lo;
            if (!hex4(j->p + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) { j->p += 6; cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00); }
          }
          utf8_put(b, cp); /* a lone surrogate is kept (as WTF-8) and escaped again on output */
          break;
        }
        default: return -1;
      }
      continue;
    }
    size_t n = utf8_len(j->p, j->end);
    if (n == 0) return -1; /* ill-formed UTF-8: the line is refused, as the fatal TextDecoder does */
    b_put(b, j->p, n); j->p += n;
  }
  return -1;
}
static jv *jvalue(jp *j);
static jv *jnew(int t) { jv *v = calloc(1, sizeof *v); if (!v) die_oom(); v->t = t; return v; }
static int jpush(jv *v, jv *item, char *key, size_t klen) {
  /* A repeated key keeps its last value (as JSON.parse does). */
  if (key) for (size_t i = 0; i < v->count; i++)
    if (v->klens[i] == klen && !memcmp(v->keys[i], key, klen)) { jfree(v->items[i]); v->items[i] = item; free(key); return 0; }
  jv **items = realloc(v->items, (v->count + 1) * sizeof *items);
  if (!items) die_oom();
  v->items = items;
  if (key) {
    char **keys = realloc(v->keys, (v->count + 1) * sizeof *keys);
    size_t *kl = realloc(v->klens, (v->count + 1) * sizeof *kl);
    if (!keys || !kl) die_oom();
    v->keys = keys; v->klens = kl; keys[v->count] = key; kl[v->count] = klen;
  }
  v->items[v->count++] = item;
  return 0;
}
static jv *jvalue(jp *j) {
  ws(j);
  if (j->p >= j->end) return NULL;
  unsigned c = *j->p;
  if (c == '{' || c == '[') {
    if (++j->depth > JSON_DEPTH) return NULL;
    int obj = c == '{';
    jv *v = jnew(obj ? J_OBJ : J_ARR);
    j->p++; ws(j);
    if (j->p < j->end && *j->p == (obj ? '}' : ']')) { j->p++; j->depth--; return v; }
    for (;;) {
      char *key = NULL; size_t klen = 0;
      if (obj) {
        buf_t k = {0};
        ws(j);
        if (jstring(j, &k)) { b_free(&k); jfree(v); return NULL; }
        b_ch(&k, 0); key = k.p; klen = k.n - 1;
        ws(j);
        if (j->p >= j->end || *j->p != ':') { free(key); jfree(v); return NULL; }
        j->p++;
      }
      jv *item = jvalue(j);
      if (!item) { free(key); jfree(v); return NULL; }
      jpush(v, item, key, klen);
      ws(j);
      if (j->p < j->end && *j->p == ',') { j->p++; continue; }
      if (j->p < j->end && *j->p == (obj ? '}' : ']')) { j->p++; j->depth--; return v; }
      jfree(v); return NULL;
    }
  }
  if (c == '"') {
    buf_t s = {0};
    if (jstring(j, &s)) { b_free(&s); return NULL; }
    jv *v = jnew(J_STR); b_ch(&s, 0); v->s = s.p; v->slen = s.n - 1; return v;
  }
  if (c == 't' && j->end - j->p >= 4 && !memcmp(j->p, "true", 4)) { j->p += 4; jv *v = jnew(J_BOOL); v->boolean = 1; return v; }
  if (c == 'f' && j->end - j->p >= 5 && !memcmp(j->p, "false", 5)) { j->p += 5; return jnew(J_BOOL); }
  if (c == 'n' && j->end - j->p >= 4 && !memcmp(j->p, "null", 4)) { j->p += 4; return jnew(J_NULL); }
  /* number, JSON grammar exactly */
  const unsigned char *s = j->p;
  if (j->p < j->end && *j->p == '-') j->p++;
  if (j->p >= j->end) return NULL;
  if (*j->p == '0') j->p++;
  else if (*j->p >= '1' && *j->p <= '9') while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  else return NULL;
  if (j->p < j->end && *j->p == '.') {
    j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return NULL;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    j->p++;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return NULL;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') j->p++;
  }
  char tmp[64]; size_t n = (size_t)(j->p - s);
  jv *v = jnew(J_NUM);
  if (n < sizeof tmp) { memcpy(tmp, s, n); tmp[n] = 0; v->num = strtod(tmp, NULL); }
  else { char *big = strndup((const char *)s, n); if (!big) die_oom(); v->num = strtod(big, NULL); free(big); }
  return v;
}
static jv *jparse(const char *p, size_t n) {
  jp j = {(const unsigned char *)p, (const unsigned char *)p + n, 0};
  jv *v = jvalue(&j);
  if (!v) return NULL;
  ws(&j);
  if (j.p != j.end) { jfree(v); return NULL; }
  return v;
}
static jv *jget(const jv *o, const char *key) {
  size_t kl = strlen(key);
  for (size_t i = 0; i < o->count; i++) if (o->klens[i] == kl && !memcmp(o->keys[i], key, kl)) return o->items[i];
  return NULL;
}
static void jstr_out(buf_t *b, const char *s, size_t n) {
  b_ch(b, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    const char *short_escape = c == '\b' ? "\\b" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\f' ? "\\f" : c == '\r' ? "\\r" : NULL;
    if (c == '"' || c == '\\') { b_ch(b, '\\'); b_ch(b, (char)c); }
    else if (short_escape) b_str(b, short_escape);
    else if (c < 0x20) { char e[8]; snprintf(e, sizeof e, "\\u%04x", c); b_str(b, e); }
    else if (c == 0xed && i + 2 < n && ((unsigned char)s[i + 1] & 0xe0) == 0xa0) {
      unsigned cp = 0xd000 | ((unsigned)(s[i + 1] & 0x3f) << 6) | (unsigned)(s[i + 2] & 0x3f);
      char e[8]; snprintf(e, sizeof e, "\\u%04x", cp); b_str(b, e); i += 2;
    } else b_ch(b, (char)c);
  }
  b_ch(b, '"');
}
static void jout(buf_t *b, const jv *v) {
  char num[40];
  switch (v->t) {
    case J_NULL: b_str(b, "null"); break;
    case J_BOOL: b_str(b, v->boolean ? "true" : "false"); break;
    case J_NUM:
      if (v->num == (double)(long long)v->num && v->num > -9007199254740992.0 && v->num < 9007199254740992.0) snprintf(num, sizeof num, "%lld", (long long)v->num);
      else snprintf(num, sizeof num, "%.17g", v->num);
      b_str(b, num); break;
    case J_STR: jstr_out(b, v->s, v->slen); break;
    default:
      b_ch(b, v->t == J_OBJ ? '{' : '[');
      for (size_t i = 0; i < v->count; i++) {
        if (i) b_ch(b, ',');
        if (v->t == J_OBJ) { jstr_out(b, v->keys[i], v->klens[i]); b_ch(b, ':'); }
        jout(b, v->items[i]);
      }
      b_ch(b, v->t == J_OBJ ? '}' : ']');
  }
}

/* ---------- frames: the same rules as the TypeScript codec (packages/bridge/src/codec.ts) ---------- */
static size_t max_frame = MAX_FRAME;
/* A string's length in UTF-16 code units (what the TypeScript side's `.length` counts). */
static size_t u16len(const char *s, size_t n) {
  size_t units = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c & 0xc0) != 0x80) units += c >= 0xf0 ? 2 : 1;
  }
  return units;
}
static int is_int(const jv *v) { return v && v->t == J_NUM && v->num > -1e15 && v->num < 1e15 && v->num == (double)(long long)v->num; }
static int all_in(const char *s, size_t n, int (*ok)(unsigned char)) { for (size_t i = 0; i < n; i++) if (!ok((unsigned char)s[i])) return 0; return 1; }
static int printable(unsigned char c) { return c >= 0x20 && c <= 0x7e; }
static int header_name_char(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+.^_`|~-", c)); }
static int upper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
static int code_char(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }
static int headers_ok(const jv *h) {
  if (!h || h->t != J_OBJ) return 0;
  for (size_t i = 0; i < h->count; i++)
    if (h->items[i]->t != J_STR || h->klens[i] == 0 || !all_in(h->keys[i], h->klens[i], header_name_char) || !strcmp(h->keys[i], "__proto__")) return 0;
  return 1;
}
static int base64_ok(const jv *b) {
  if (!b || b->t != J_STR || b->slen % 4) return 0;
  size_t n = b->slen, pad = n && b->s[n - 1] == '=' ? (n > 1 && b->s[n - 2] == '=' ? 2 : 1) : 0;
  for (size_t i = 0; i < n - pad; i++) if (b64v(b->s[i]) < 0) return 0;
  return 1;
}
/* NULL when `id` is a valid id, else the code. */
static const char *id_problem(const jv *id) {
  if (!id || id->t != J_STR) return "malformed_frame";
  if (u16len(id->s, id->slen) > MAX_ID) return "id_too_large";
  return id->slen && all_in(id->s, id->slen, printable) ? NULL : "malformed_frame";
}
/* The fields each type has, exactly (codec.ts FIELDS); a leading '?' marks an optional one. */
static const char *const TYPES[5] = {"ready", "request", "response", "heartbeat", "error"};
static const char *const FIELDS[5][6] = {
  {"nonce"}, {"id", "method", "path", "headers", "body"}, {"id", "status", "headers", "body"}, {0}, {"code", "?id", "?message"},
};
static int field_allowed(int t, const char *k) {
  if (!strcmp(k, "version") || !strcmp(k, "type")) return 1;
  for (int i = 0; i < 6 && FIELDS[t][i]; i++) if (!strcmp(FIELDS[t][i] + (FIELDS[t][i][0] == '?'), k)) return 1;
  return 0;
}
static int field_required_missing(int t, const jv *v) {
  for (int i = 0; i < 6 && FIELDS[t][i]; i++) if (FIELDS[t][i][0] != '?' && !jget(v, FIELDS[t][i])) return 1;
  return 0;
}
static int cmp_keys(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
/* The canonical line (codec.ts encodeFrame): fields in table order, header names sorted. */
static void frame_out(buf_t *o, const jv *v, int t, int bare) {
  if (!bare) { b_str(o, "{\"version\":1,\"type\":\""); b_str(o, TYPES[t]); b_ch(o, '"'); }
  else b_ch(o, '{');
  const char *order[5][5] = {{"nonce"}, {"id", "method", "path"}, {"id", "status"}, {0}, {"code", "id", "message"}};
  int first = bare;
  for (int i = 0; i < 5 && order[t][i]; i++) {
    const jv *f = jget(v, order[t][i]);
    if (!f) continue;
    if (!first) b_ch(o, ',');
    first = 0;
    jstr_out(o, order[t][i], strlen(order[t][i])); b_ch(o, ':'); jout(o, f);
  }
  if (t == 1 || t == 2) {
    const jv *h = jget(v, "headers");
    const char **keys = malloc((h->count + 1) * sizeof *keys);
    if (!keys) die_oom();
    for (size_t i = 0; i < h->count; i++) keys[i] = h->keys[i];
    qsort(keys, h->count, sizeof *keys, cmp_keys);
    b_str(o, ",\"headers\":{");
    for (size_t i = 0; i < h->count; i++) {
      if (i) b_ch(o, ',');
      jstr_out(o, keys[i], strlen(keys[i])); b_ch(o, ':'); jout(o, jget(h, keys[i]));
    }
    free(keys);
    b_str(o, "},\"body\":"); jout(o, jget(v, "body"));
  }
  b_ch(o, '}');
}
/*
 * Checks one line (without its '\n'). Returns NULL and the parsed object in *out (its type index
 * in *type), or the refusal code. `bare` is -1 for a frame, or the type index (1 request,
 * 2 response) of a queue_v1 spool object: that frame's fields without `version` and `type`.
 */
static const char *frame_check(const char *line, size_t n, jv **out, int *type, int bare) {
  *out = NULL;
  if (n > max_frame) return "frame_too_large";
  jv *v = jparse(line, n);
  const char *bad = NULL;
  int t = bare;
  if (!v || v->t != J_OBJ) bad = "malformed_frame";
  else if (bare >= 0) { if (jget(v, "version") || jget(v, "type")) bad = "malformed_frame"; }
  else {
    const jv *ver = jget(v, "version"), *ty = jget(v, "type");
    if (!ver || ver->t != J_NUM) bad = "malformed_frame";
    else if (ver->num != 1) bad = "version_mismatch";
    else if (!ty || ty->t != J_STR) bad = "malformed_frame";
    else {
      for (t = 0; t < 5 && strcmp(TYPES[t], ty->s); t++) {}
      if (t == 5 || strlen(ty->s) != ty->slen) bad = "unknown_type";
    }
  }
  if (!bad) {
    for (size_t i = 0; !bad && i < v->count; i++)
      if (strlen(v->keys[i]) != v->klens[i] || !field_allowed(t, v->keys[i])) bad = "malformed_frame";
    if (!bad && field_required_missing(t, v)) bad = "malformed_frame";
    if (!bad && jget(v, "id")) bad = id_problem(jget(v, "id"));
  }
  if (!bad) {
    const jv *a, *b;
    switch (t) {
      case 0:
        a = jget(v, "nonce");
        if (a->t != J_STR || u16len(a->s, a->slen) > 128) bad = "malformed_frame";
        break;
      case 1:
        a = jget(v, "method"); b = jget(v, "path");
        if (a->t != J_STR || a->slen < 1 || a->slen > 16 || !all_in(a->s, a->slen, upper)) bad = "malformed_frame";
        else if (b->t != J_STR || b->slen < 1 || b->s[0] != '/' || b->slen > 8192) bad = "malformed_frame";
        else if (!headers_ok(jget(v, "headers")) || !base64_ok(jget(v, "body"))) bad = "malformed_frame";
        break;
      case 2:
        a = jget(v, "status");
        if (!is_int(a) || a->num < 100 || a->num > 599) bad = "malformed_frame";
        else if (!headers_ok(jget(v, "headers")) || !base64_ok(jget(v, "body"))) bad = "malformed_frame";
        break;
      case 4:
        a = jget(v, "code"); b = jget(v, "message");
        if (a->t != J_STR || a->slen < 1 || a->slen > 64 || a->s[0] < 'a' || a->s[0] > 'z' || !all_in(a->s, a->slen, code_char)) bad = "malformed_frame";
        else if (b && (b->t != J_STR || u16len(b->s, b->slen) > 1024)) bad = "malformed_frame";
        break;
      default: break;
    }
  }
  if (bad) { jfree(v); return bad; }
  *out = v; if (type) *type = t;
  return NULL;
}

/*
 * A line splitter for one input stream. A line longer than max_frame is reported once as
 * frame_too_large and skipped to its newline without being held in memory.
 */
typedef struct { buf_t acc; int overflow; } lines_t;
typedef void (*line_fn)(void *ctx, const char *line, size_t n, int too_large);
static void lines_feed(lines_t *l, const char *data, size_t n, line_fn fn, void *ctx) {
  while (n > 0) {
    const char *nl = memchr(data, '\n', n);
    size_t take = nl ? (size_t)(nl - data) : n;
    if (!l->overflow) {
      if (l->acc.n + take > max_frame) { l->overflow = 1; b_free(&l->acc); }
      else b_put(&l->acc, data, take);
    }
    if (!nl) return;
    if (l->overflow) fn(ctx, NULL, 0, 1);
    else fn(ctx, l->acc.p ? l->acc.p : "", l->acc.n, 0);
    l->acc.n = 0; l->overflow = 0;
    data = nl + 1; n -= take + 1;
  }
}

/* ---------- decode: the vector test mode ---------- */
/* Prints "F <canonical line>" or "E <code>" per decoded line, like codec.ts createFrameDecoder. */
static void decode_line(void *ctx, const char *line, size_t n, int too_large) {
  buf_t *out = ctx;
  if (!too_large && n == 0) return; /* empty lines are skipped */
  jv *v = NULL; int t = 0;
  const char *err = too_large ? "frame_too_large" : frame_check(line, n, &v, &t, -1);
  if (err) { b_str(out, "E "); b_str(out, err); b_ch(out, '\n'); return; }
  b_str(out, "F "); frame_out(out, v, t, 0); b_ch(out, '\n');
  jfree(v);
}
static int run_decode(void) {
  lines_t l = {0}; buf_t out = {0}; char chunk[65536];
  for (;;) {
    ssize_t r = read(0, chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    lines_feed(&l, chunk, (size_t)r, decode_line, &out);
    if (out.n) { write_all(1, out.p, out.n); out.n = 0; }
  }
  /* The stream ended inside a line: an oversized one was already refused, any other is malformed. */
  if (l.overflow) b_str(&out, "E frame_too_large\n");
  else if (l.acc.n) b_str(&out, "E malformed_frame\n");
  write_all(1, out.p ? out.p : "", out.n);
  return 0;
}

/* ---------- configuration ---------- */
static struct {
  int port; const char *nonce; const char *spool;
  size_t max_body; int max_conns; int64_t wait_ms, hb_ms; int max_depth; int daemon;
} cfg = {0, NULL, "/run/sandcast-bridge", 1024 * 1024, 64, 35000, 5000, 64, 0};

enum { C_FREE, C_READING, C_WAITING, C_WRITING, C_DRAINING };
/* Slots beyond --max-conns that only answer 503 (so a refused client reads its answer). */
#define REFUSAL_SLOTS 16
typedef struct {
  int fd, state, unsafe;
  buf_t in, out; size_t out_off;
  char id[48];
  int64_t deadline;
} conn_t;
static conn_t *conns;
static char id_prefix[20];
static unsigned long long id_counter;
static buf_t outq; /* duplex: frames waiting for stdout */
static int duplex_mode, lost;
static int64_t last_heard, next_beat;
static int listen_fd = -1, ino_fd = -1;

static const char *reason(int s) {
  switch (s) {
    case 200: return "OK"; case 201: return "Created"; case 202: return "Accepted"; case 204: return "No Content";
    case 400: return "Bad Request"; case 401: return "Unauthorized"; case 403: return "Forbidden"; case 404: return "Not Found";
    case 408: return "Request Timeout"; case 409: return "Conflict"; case 413: return "Payload Too Large";
    case 500: return "Internal Server Error"; case 502: return "Bad Gateway"; case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout"; default: return "Status";
  }
}
static int token_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}
static void conn_close(conn_t *c) {
  if (c->fd >= 0) close(c->fd);
  b_free(&c->in); b_free(&c->out);
  memset(c, 0, sizeof *c); c->fd = -1; c->state = C_FREE;
}
/* Starts writing an HTTP answer; `headers` (a JSON object of strings) may be NULL. */
static void answer(conn_t *c, int status, const jv *headers, const char *body, size_t n) {
  if (c->fd < 0) { conn_close(c); return; } /* the client left while its request was out */
  buf_t *o = &c->out; char line[128];
  o->n = 0; c->out_off = 0;
  snprintf(line, sizeof line, "HTTP/1.1 %d %s\r\n", status, reason(status)); b_str(o, line);
  int typed = 0;
  if (headers) for (size_t i = 0; i < headers->count; i++) {
    const char *k = headers->keys[i]; const jv *v = headers->items[i];
    size_t kl = headers->klens[i], ok = kl > 0 && kl < 256;
    for (size_t x = 0; ok && x < kl; x++) ok = token_char((unsigned char)k[x]);
    for (size_t x = 0; ok && x < v->slen; x++) ok = (unsigned char)v->s[x] >= 0x20 || v->s[x] == '\t';
    if (!ok || !strcasecmp(k, "content-length") || !strcasecmp(k, "transfer-encoding") || !strcasecmp(k, "connection") || !strcasecmp(k, "keep-alive")) continue;
    if (!strcasecmp(k, "content-type")) typed = 1;
    b_put(o, k, kl); b_str(o, ": "); b_put(o, v->s, v->slen); b_str(o, "\r\n");
  }
  if (!headers && n > 0 && !typed) b_str(o, "content-type: application/json\r\n");
  snprintf(line, sizeof line, "content-length: %zu\r\nconnection: close\r\n\r\n", n); b_str(o, line);
  b_put(o, body, n);
  c->state = C_WRITING;
  b_free(&c->in);
}
static void answer_error(conn_t *c, int status, const char *code, const char *message) {
  buf_t b = {0};
  b_str(&b, "{\"error\":{\"code\":\""); b_str(&b, code); b_str(&b, "\",\"message\":");
  jstr_out(&b, message, strlen(message)); b_str(&b, "}}");
  answer(c, status, NULL, b.p, b.n);
  b_free(&b);
}
static conn_t *conn_by_id(const char *id, size_t n) {
  for (int i = 0; i < cfg.max_conns; i++)
    if (conns[i].state == C_WAITING && strlen(conns[i].id) == n && !memcmp(conns[i].id, id, n)) return &conns[i];
  return NULL;
}
static int waiting_count(void) { int n = 0; for (int i = 0; i < cfg.max_conns; i++) n += conns[i].state == C_WAITING; return n; }

/* Turns one complete HTTP request into the request object; 0 when it is not complete yet. */
static int parse_request(conn_t *c) {
  char *end = c->in.n >= 4 ? memmem(c->in.p, c->in.n, "\r\n\r\n", 4) : NULL;
  if (!end) {
    if (c->in.n > MAX_HEAD) answer_error(c, 400, "bad_request", "the request head is larger than 16 KiB; send fewer or shorter headers");
    return 0;
  }
  size_t head = (size_t)(end - c->in.p) + 4;
  if (head > MAX_HEAD) { answer_error(c, 400, "bad_request", "the request head is larger than 16 KiB; send fewer or shorter headers"); return 0; }
  char *p = c->in.p, *eol = memmem(p, head, "\r\n", 2);
  char *sp1 = memchr(p, ' ', (size_t)(eol - p)), *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
  if (!sp1 || !sp2 || sp1 == p || sp1 - p > 16 || sp2 == sp1 + 1 || sp1[1] != '/' ||
      (size_t)(eol - sp2 - 1) != 8 || (memcmp(sp2 + 1, "HTTP/1.1", 8) && memcmp(sp2 + 1, "HTTP/1.0", 8))) {
    answer_error(c, 400, "bad_request", "send an HTTP/1.1 request: METHOD /path HTTP/1.1"); return 0;
  }
  for (char *x = p; x < sp1; x++) if (*x < 'A' || *x > 'Z') { answer_error(c, 400, "bad_request", "the method must be upper-case letters"); return 0; }
  for (char *x = sp1 + 1; x < sp2; x++) if ((unsigned char)*x <= 0x20 || (unsigned char)*x >= 0x7f) { answer_error(c, 400, "bad_request", "the path must be printable ASCII"); return 0; }
  /* headers: lower-case names, repeated ones joined with ", " */
  jv *hdr = jnew(J_OBJ);
  long long length = -1; int count = 0; const char *bad = NULL;
  for (char *line = eol + 2; !bad && line < c->in.p + head - 2; ) {
    char *le = memmem(line, (size_t)(c->in.p + head - line), "\r\n", 2);
    char *colon = memchr(line, ':', (size_t)(le - line));
    if (!colon || colon == line || ++count > MAX_HEADERS) { bad = "each header needs a name and a colon (at most 100 headers)"; break; }
    buf_t name = {0};
    for (char *x = line; x < colon; x++) { if (!token_char((unsigned char)*x)) bad = "a header name has a character HTTP does not allow"; b_ch(&name, (char)(*x >= 'A' && *x <= 'Z' ? *x + 32 : *x)); }
    char *v = colon + 1, *ve = le;
    while (v < ve && (*v == ' ' || *v == '\t')) v++;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
    for (char *x = v; !bad && x < ve; x++) if (((unsigned char)*x < 0x20 && *x != '\t') || (unsigned char)*x >= 0x7f) bad = "header values must be printable ASCII";
    b_ch(&name, 0);
    if (!bad && !strcmp(name.p, "transfer-encoding")) bad = "chunked bodies are not accepted; send Content-Length";
    if (!bad && !strcmp(name.p, "content-length")) {
      long long n = 0; if (v == ve) bad = "Content-Length must be a number";
      for (char *x = v; !bad && x < ve; x++) { if (*x < '0' || *x > '9' || n > (1LL << 40)) bad = "Content-Length must be a number"; else n = n * 10 + (*x - '0'); }
      if (!bad && length >= 0 && length != n) bad = "two different Content-Length headers";
      length = n;
    }
    if (!bad) {
      jv *prev = jget(hdr, name.p);
      if (prev) { buf_t j = {0}; b_put(&j, prev->s, prev->slen); b_str(&j, ", "); b_put(&j, v, (size_t)(ve - v)); b_ch(&j, 0);
        free(prev->s); prev->s = j.p; prev->slen = j.n - 1; b_free(&name); }
      else { jv *s = jnew(J_STR); s->s = strndup(v, (size_t)(ve - v)); if (!s->s) die_oom(); s->slen = (size_t)(ve - v); jpush(hdr, s, name.p, name.n - 1); name.p = NULL; }
    }
    b_free(&name);
    line = le + 2;
  }
  if (bad) { jfree(hdr); answer_error(c, 400, "bad_request", bad); return 0; }
  if (length < 0) length = 0;
  if ((unsigned long long)length > cfg.max_body) { jfree(hdr); answer_error(c, 413, "payload_too_large", "the body is larger than the bridge accepts (1 MiB unless configured)"); return 0; }
  if (c->in.n < head + (size_t)length) { jfree(hdr); return 0; }
  /* complete: build the request object */
  c->unsafe = !((sp1 - p == 3 && !memcmp(p, "GET", 3)) || (sp1 - p == 4 && !memcmp(p, "HEAD", 4)) || (sp1 - p == 7 && !memcmp(p, "OPTIONS", 7)));
  snprintf(c->id, sizeof c->id, "%s-%llu", id_prefix, ++id_counter);
  buf_t f = {0};
  b_str(&f, duplex_mode ? "{\"version\":1,\"type\":\"request\",\"id\":\"" : "{\"id\":\"");
  b_str(&f, c->id); b_str(&f, "\",\"method\":"); jstr_out(&f, p, (size_t)(sp1 - p));
  b_str(&f, ",\"path\":"); jstr_out(&f, sp1 + 1, (size_t)(sp2 - sp1 - 1));
  b_str(&f, ",\"headers\":"); jout(&f, hdr); jfree(hdr);
  b_str(&f, ",\"body\":\""); b64_encode(&f, (unsigned char *)c->in.p + head, (size_t)length); b_str(&f, "\"}\n");
  int ok = 1;
  if (duplex_mode) {
    if (outq.n + f.n > MAX_OUTQ) ok = 0; else b_put(&outq, f.p, f.n);
  } else {
    char tmp[512], dst[512];
    snprintf(tmp, sizeof tmp, "%s/req/.%s.tmp", cfg.spool, c->id); snprintf(dst, sizeof dst, "%s/req/%s.json", cfg.spool, c->id);
    int fd = waiting_count() >= cfg.max_depth ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    ok = fd >= 0 && write_all(fd, f.p, f.n) == 0;
    if (fd >= 0) close(fd);
    ok = ok && rename(tmp, dst) == 0;
    if (!ok) unlink(tmp);
  }
  b_free(&f);
  if (!ok) { answer_error(c, 503, "provider_unavailable", "the bridge queue is full; retry shortly"); return 0; }
  c->state = C_WAITING; c->deadline = now_ms() + cfg.wait_ms;
  b_free(&c->in);
  return 1;
}

/* A response object (frame or spool file) for a waiting connection. */
static void deliver(const jv *v) {
  const jv *id = jget(v, "id");
  conn_t *c = conn_by_id(id->s, id->slen);
  if (!c) return; /* unknown or already answered: never answered twice */
  buf_t body = {0};
  const jv *b = jget(v, "body");
  if (b64_decode(&body, b->s, b->slen)) { answer_error(c, 502, "provider_error", "the host sent a response this gateway cannot read"); b_free(&body); return; }
  answer(c, (int)jget(v, "status")->num, jget(v, "headers"), body.p ? body.p : "", body.n);
  b_free(&body);
}
static void answer_all_lost(void) {
  for (int i = 0; i < cfg.max_conns; i++) {
    conn_t *c = &conns[i];
    if (c->state == C_READING) conn_close(c);
    else if (c->state == C_WAITING) {
      if (c->unsafe) answer_error(c, 504, "indeterminate", "the bridge was lost while this request was out; its outcome is unknown, check before retrying");
      else answer_error(c, 502, "provider_unavailable", "the bridge to the host was lost; retry");
    }
  }
}
static void host_line(void *ctx, const char *line, size_t n, int too_large) {
  (void)ctx;
  if (too_large || n == 0) return;
  jv *v = NULL; int t = 0;
  if (frame_check(line, n, &v, &t, -1)) return; /* a frame we cannot read is dropped, never fatal */
  const char *type = TYPES[t];
  if (!strcmp(type, "response")) deliver(v);
  else if (!strcmp(type, "error")) {
    jv *id = jget(v, "id");
    if (id) { conn_t *c = conn_by_id(id->s, id->slen); if (c) answer_error(c, 502, "provider_error", "the host refused this request"); }
    else lost = 1; /* the host refused the channel */
  }
  jfree(v);
}
static void flush_outq(void) {
  while (outq.n > 0) {
    ssize_t w = write(1, outq.p, outq.n);
    if (w < 0) { if (errno == EINTR) continue; if (errno != EAGAIN) lost = 1; return; }
    b_drop(&outq, (size_t)w);
  }
}
static void queue_response(const char *name) {
  size_t nl = strlen(name);
  if (nl < 6 || name[0] == '.' || strcmp(name + nl - 5, ".json")) return;
  conn_t *c = conn_by_id(name, nl - 5);
  if (!c) return;
  char path[512]; snprintf(path, sizeof path, "%s/res/%s", cfg.spool, name);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  buf_t b = {0}; char chunk[65536]; ssize_t r;
  while ((r = read(fd, chunk, sizeof chunk)) > 0 && b.n <= MAX_FRAME) b_put(&b, chunk, (size_t)r);
  close(fd);
  while (b.n && (b.p[b.n - 1] == '\n' || b.p[b.n - 1] == '\r')) b.n--;
  jv *v = NULL;
  if (!frame_check(b.p ? b.p : "", b.n, &v, NULL, 2)) {
    jv *id = jget(v, "id");
    if (id->slen == nl - 5 && !memcmp(id->s, name, nl - 5)) {
      deliver(v);
      unlink(path);
      snprintf(path, sizeof path, "%s/work/%s.json", cfg.spool, c->id); unlink(path);
    }
  }
  jfree(v); b_free(&b);
}
static void mkdirs(void) {
  char p[512];
  mkdir(cfg.spool, 0700);
  snprintf(p, sizeof p, "%s/req", cfg.spool); mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/res", cfg.spool); mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/work", cfg.spool); mkdir(p, 0700);
}
static int bind_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET; a.sin_port = htons((uint16_t)cfg.port); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 128)) { if (fd >= 0) close(fd); return -1; }
  return fd;
}

static int run_server(void) {
  signal(SIGPIPE, SIG_IGN);
  unsigned char rnd[4] = {0};
  int ur = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (ur >= 0) { (void)!read(ur, rnd, sizeof rnd); close(ur); }
  snprintf(id_prefix, sizeof id_prefix, "g%02x%02x%02x%02x%x", rnd[0], rnd[1], rnd[2], rnd[3], (unsigned)getpid() & 0xffff);
  if (!duplex_mode) mkdirs();
  listen_fd = bind_port();
  if (listen_fd < 0) {
    if (duplex_mode) { static const char f[] = "{\"version\":1,\"type\":\"error\",\"code\":\"bind_failed\"}\n"; write_all(1, f, sizeof f - 1); }
    fprintf(stderr, "sandcast-gateway: cannot listen on 127.0.0.1:%d: %s\n", cfg.port, strerror(errno));
    return 3;
  }
  int slots = cfg.max_conns + REFUSAL_SLOTS;
  conns = calloc((size_t)slots, sizeof *conns);
  if (!conns) die_oom();
  for (int i = 0; i < slots; i++) conns[i].fd = -1;
  if (duplex_mode) {
    buf_t r = {0};
    b_str(&r, "{\"version\":1,\"type\":\"ready\",\"nonce\":"); jstr_out(&r, cfg.nonce, strlen(cfg.nonce)); b_str(&r, "}\n");
    write_all(1, r.p, r.n); b_free(&r);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
  } else {
    if (cfg.daemon) {
      pid_t pid = fork();
      if (pid < 0) return 1;
      if (pid > 0) _exit(0);
      setsid();
      int null = open("/dev/null", O_RDWR);
      if (null >= 0) { dup2(null, 0); dup2(null, 1); dup2(null, 2); if (null > 2) close(null); }
    }
    char p[512]; snprintf(p, sizeof p, "%s/gateway.pid", cfg.spool);
    FILE *pf = fopen(p, "w"); if (pf) { fprintf(pf, "%d\n", (int)getpid()); fclose(pf); }
    ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    snprintf(p, sizeof p, "%s/res", cfg.spool);
    if (ino_fd >= 0 && inotify_add_watch(ino_fd, p, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) { close(ino_fd); ino_fd = -1; }
  }
  last_heard = now_ms(); next_beat = last_heard + cfg.hb_ms;
  struct pollfd *pf = calloc((size_t)slots + 4, sizeof *pf);
  int *slot = calloc((size_t)slots + 4, sizeof *slot);
  if (!pf || !slot) die_oom();
  int64_t last_scan = 0;
  lines_t from_host = {0};
  int64_t lost_at = 0;
  for (;;) {
    int64_t now = now_ms();
    if (lost && !lost_at) { answer_all_lost(); lost_at = now; close(listen_fd); listen_fd = -1; }
    if (lost_at) {
      int busy = 0; for (int i = 0; i < cfg.max_conns; i++) busy |= conns[i].state == C_WRITING;
      if (!busy || now - lost_at > 2000) return 4;
    }
    if (duplex_mode && !lost) {
      if (now >= next_beat) { b_str(&outq, "{\"version\":1,\"type\":\"heartbeat\"}\n"); next_beat = now + cfg.hb_ms; }
      if (now - last_heard > 3 * cfg.hb_ms) lost = 1;
    }
    int64_t wake = duplex_mode ? next_beat : now + 200;
    int nf = 0, base;
    if (listen_fd >= 0) pf[nf++] = (struct pollfd){listen_fd, POLLIN, 0};
    if (duplex_mode && !lost) { pf[nf++] = (struct pollfd){0, POLLIN, 0}; if (outq.n) pf[nf++] = (struct pollfd){1, POLLOUT, 0}; }
    if (ino_fd >= 0) pf[nf++] = (struct pollfd){ino_fd, POLLIN, 0};
    base = nf;
    for (int i = 0; i < slots; i++) {
      slot[nf] = i;
      conn_t *c = &conns[i];
      if (c->state == C_FREE) continue;
      if (c->state == C_DRAINING && now >= c->deadline) { conn_close(c); continue; }
      if (c->state != C_WRITING && c->state != C_DRAINING && now >= c->deadline) {
        if (c->state == C_READING) answer_error(c, 408, "bad_request", "the request did not arrive in time");
        else {
          if (!duplex_mode) { /* its spool files go with it */
            char p[768];
            snprintf(p, sizeof p, "%s/req/%s.json", cfg.spool, c->id); unlink(p);
            snprintf(p, sizeof p, "%s/work/%s.json", cfg.spool, c->id); unlink(p);
          }
          if (c->unsafe) answer_error(c, 504, "indeterminate", "the host did not answer in time; the outcome is unknown, check before retrying");
          else answer_error(c, 504, "provider_unavailable", "the host did not answer in time; retry");
        }
      }
      if (c->state == C_FREE) continue;
      if (c->state != C_WRITING && c->deadline < wake) wake = c->deadline;
      pf[nf++] = (struct pollfd){c->fd, (short)(c->state == C_WRITING ? POLLOUT : POLLIN), 0};
    }
    int timeout = (int)(wake - now); if (timeout < 0) timeout = 0; if (timeout > 1000) timeout = 1000;
    if (poll(pf, (nfds_t)nf, timeout) < 0 && errno != EINTR) return 1;
    for (int k = 0; k < base; k++) {
      if (!pf[k].revents) continue;
      if (pf[k].fd == listen_fd) {
        for (;;) {
          int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (fd < 0) break;
          conn_t *c = NULL;
          for (int i = 0; i < cfg.max_conns && !c; i++) if (conns[i].state == C_FREE) c = &conns[i];
          if (c) { c->fd = fd; c->state = C_READING; c->deadline = now_ms() + 10000; continue; }
          for (int i = cfg.max_conns; i < slots && !c; i++) if (conns[i].state == C_FREE) c = &conns[i];
          if (!c) { close(fd); continue; }
          c->fd = fd;
          answer_error(c, 503, "provider_unavailable", "the bridge has too many connections open; retry shortly");
        }
      } else if (pf[k].fd == 0) {
        char chunk[65536]; ssize_t r = read(0, chunk, sizeof chunk);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) lost = 1;
        else if (r > 0) { last_heard = now_ms(); lines_feed(&from_host, chunk, (size_t)r, host_line, NULL); }
      } else if (pf[k].fd == 1) flush_outq();
      else if (pf[k].fd == ino_fd) {
        char ev[8192] __attribute__((aligned(8))); ssize_t r;
        while ((r = read(ino_fd, ev, sizeof ev)) > 0)
          for (char *e = ev; e < ev + r; e += sizeof(struct inotify_event) + ((struct inotify_event *)e)->len) {
            struct inotify_event *ie = (struct inotify_event *)e;
            if (ie->len) queue_response(ie->name);
          }
      }
    }
    for (int k = base; k < nf; k++) {
      conn_t *c = &conns[slot[k]];
      if (c->state == C_FREE || c->fd < 0 || c->fd != pf[k].fd || !pf[k].revents) continue;
      if (c->state == C_WRITING) {
        ssize_t w = write(c->fd, c->out.p + c->out_off, c->out.n - c->out_off);
        if (w > 0) c->out_off += (size_t)w;
        if (w < 0 && errno != EAGAIN && errno != EINTR) conn_close(c);
        else if (c->out_off >= c->out.n) {
          /* Answered: read what the client still sends until it closes (a close with unread data would reset the answer). */
          shutdown(c->fd, SHUT_WR);
          c->state = C_DRAINING; c->deadline = now_ms() + 1000;
        }
      } else if (c->state == C_DRAINING) {
        char sink[16384]; ssize_t r = read(c->fd, sink, sizeof sink);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) conn_close(c);
      } else {
        char chunk[65536]; ssize_t r = read(c->fd, chunk, sizeof chunk);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
          /* The client went away. A request already out stays owned by the host; its answer is dropped. */
          if (c->state == C_READING) conn_close(c); else { close(c->fd); c->fd = -1; }
          continue;
        }
        if (r > 0 && c->state == C_READING) {
          size_t cap = MAX_HEAD + cfg.max_body + 4, room = cap - c->in.n;
          b_put(&c->in, chunk, (size_t)r < room ? (size_t)r : room);
          if (!parse_request(c) && c->state == C_READING && c->in.n >= cap)
            answer_error(c, 413, "payload_too_large", "the request is larger than the bridge accepts");
        }
      }
    }
    if (duplex_mode && outq.n) flush_outq();
    if (!duplex_mode && now_ms() - last_scan >= (ino_fd >= 0 ? 200 : 5)) { /* the scan behind inotify */
      last_scan = now_ms();
      for (int i = 0; i < cfg.max_conns; i++) if (conns[i].state == C_WAITING) {
        char name[64]; snprintf(name, sizeof name, "%s.json", conns[i].id); queue_response(name);
      }
    }
  }
}

/* ---------- wait / commit: the host's side of queue_v1, run through exec ---------- */
/*
 * Claims up to `limit` pending requests: req/<id>.json moves to work/<id>.json and its id is
 * printed. Anything in the spool may have been planted by a sandbox process: a file that is not a
 * regular file holding a valid request object named by its own id is removed, not claimed.
 */
typedef struct { char name[MAX_ID + 8]; struct timespec at; } pending_t;
static int older(const void *a, const void *b) {
  const struct timespec *x = &((const pending_t *)a)->at, *y = &((const pending_t *)b)->at;
  return x->tv_sec != y->tv_sec ? (x->tv_sec < y->tv_sec ? -1 : 1) : (x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec);
}
static int claim_pending(buf_t *out, int limit) {
  char dir[512]; snprintf(dir, sizeof dir, "%s/req", cfg.spool);
  DIR *d = opendir(dir);
  if (!d) return -1;
  /* Oldest first: the candidates (at most 4096 looked at per wait) sorted by their time of arrival. */
  pending_t *list = NULL; size_t count = 0, cap = 0; struct dirent *e;
  while (count < 4096 && (e = readdir(d))) {
    size_t nl = strlen(e->d_name);
    if (e->d_name[0] == '.' || nl < 6 || nl > MAX_ID + 5 || strcmp(e->d_name + nl - 5, ".json")) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) continue;
    if (count == cap) { cap = cap ? cap * 2 : 64; pending_t *grown = realloc(list, cap * sizeof *list); if (!grown) die_oom(); list = grown; }
    memcpy(list[count].name, e->d_name, nl + 1); list[count].at = st.st_mtim; count++;
  }
  closedir(d);
  qsort(list, count, sizeof *list, older);
  int claimed = 0;
  for (size_t k = 0; k < count && claimed < limit; k++) {
    const char *name = list[k].name; size_t nl = strlen(name);
    char from[768], to[768];
    snprintf(from, sizeof from, "%s/%s", dir, name);
    snprintf(to, sizeof to, "%s/work/%s", cfg.spool, name);
    if (rename(from, to)) continue; /* another waiter took it */
    int fd = open(to, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > MAX_FRAME + 1) { if (fd >= 0) close(fd); unlink(to); continue; }
    buf_t b = {0}; char chunk[65536]; ssize_t r;
    while ((r = read(fd, chunk, sizeof chunk)) > 0 && b.n <= MAX_FRAME + 1) b_put(&b, chunk, (size_t)r);
    close(fd);
    while (b.n && (b.p[b.n - 1] == '\n' || b.p[b.n - 1] == '\r')) b.n--;
    jv *v = NULL;
    if (!frame_check(b.p ? b.p : "", b.n, &v, NULL, 1)) {
      jv *id = jget(v, "id");
      if (id->slen == nl - 5 && !memcmp(id->s, name, nl - 5)) { b_put(out, id->s, id->slen); b_ch(out, '\n'); claimed++; }
      else unlink(to);
    } else unlink(to);
    jfree(v); b_free(&b);
  }
  free(list);
  return claimed;
}
static int run_wait(int limit, int64_t wait_ms) {
  mkdirs();
  char dir[512]; snprintf(dir, sizeof dir, "%s/req", cfg.spool);
  int ino = inotify_init1(IN_CLOEXEC);
  if (ino >= 0 && inotify_add_watch(ino, dir, IN_MOVED_TO) < 0) { close(ino); ino = -1; }
  int64_t end = now_ms() + wait_ms;
  buf_t out = {0};
  for (;;) {
    int n = claim_pending(&out, limit);
    if (n < 0) { fprintf(stderr, "sandcast-gateway: no spool at %s\n", cfg.spool); return 1; }
    if (n > 0) break;
    int64_t left = end - now_ms();
    if (left <= 0) break;
    struct pollfd f = {ino, POLLIN, 0};
    if (ino >= 0) { if (poll(&f, 1, (int)(left > 1000 ? 1000 : left)) > 0) { char ev[4096]; (void)!read(ino, ev, sizeof ev); } }
    else usleep(20000);
  }
  write_all(1, out.p ? out.p : "", out.n);
  return 0;
}
static int id_safe(const char *id) {
  size_t n = strlen(id);
  if (n == 0 || n > 128 || id[0] == '.') return 0;
  for (size_t i = 0; i < n; i++) if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') || (id[i] >= '0' && id[i] <= '9') || id[i] == '-' || id[i] == '_' || id[i] == '.')) return 0;
  return 1;
}
/* Publishes answers the host wrote as res/.<id>.tmp: each becomes res/<id>.json at once. */
static int run_commit(int argc, char **argv, int first) {
  int failed = 0;
  for (int i = first; i < argc; i++) {
    if (!id_safe(argv[i])) { fprintf(stderr, "sandcast-gateway: not a spool id: %s\n", argv[i]); failed = 1; continue; }
    char tmp[768], dst[768];
    snprintf(tmp, sizeof tmp, "%s/res/.%s.tmp", cfg.spool, argv[i]); snprintf(dst, sizeof dst, "%s/res/%s.json", cfg.spool, argv[i]);
    if (rename(tmp, dst)) { fprintf(stderr, "sandcast-gateway: commit %s: %s\n", argv[i], strerror(errno)); failed = 1; }
  }
  return failed;
}

/* ---------- request: a minimal HTTP client for $SANDCAST_BRIDGE_URL ---------- */
static int run_request(int argc, char **argv) {
  const char *method = NULL, *path = NULL, *url = getenv("SANDCAST_BRIDGE_URL"), *token = getenv("SANDCAST_BRIDGE_TOKEN");
  buf_t body = {0}, hdrs = {0}; int include = 0, has_auth = 0, has_body = 0; long repeat = 1;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "-X") && i + 1 < argc) method = argv[++i];
    else if (!strcmp(argv[i], "-H") && i + 1 < argc) { if (!strncasecmp(argv[i + 1], "authorization:", 14)) has_auth = 1; b_str(&hdrs, argv[++i]); b_str(&hdrs, "\r\n"); }
    else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
      const char *d = argv[++i]; has_body = 1;
      if (d[0] == '@') { int fd = open(d + 1, O_RDONLY); char c[65536]; ssize_t r; if (fd < 0) { perror(d + 1); return 2; } while ((r = read(fd, c, sizeof c)) > 0) b_put(&body, c, (size_t)r); close(fd); }
      else b_str(&body, d);
    } else if (!strcmp(argv[i], "-i")) include = 1;
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = strtol(argv[++i], NULL, 10) > 0 ? strtol(argv[i], NULL, 10) : 1;
    else path = argv[i];
  }
  int port = 0;
  if (!url || sscanf(url, "http://127.0.0.1:%d", &port) != 1 || !path || path[0] != '/') {
    fprintf(stderr, "usage: SANDCAST_BRIDGE_URL=http://127.0.0.1:<port> sandcast-gateway request [-X M] [-H 'k: v'] [-d DATA|@file] [-i] [--repeat N] /path\n");
    return 2;
  }
  if (!method) method = has_body ? "POST" : "GET";
  buf_t req = {0}; char line[256];
  b_str(&req, method); b_ch(&req, ' '); b_str(&req, path); b_str(&req, " HTTP/1.1\r\nhost: 127.0.0.1\r\n");
  if (token && *token && !has_auth) { b_str(&req, "authorization: Bearer "); b_str(&req, token); b_str(&req, "\r\n"); }
  b_put(&req, hdrs.p ? hdrs.p : "", hdrs.n);
  snprintf(line, sizeof line, "content-length: %zu\r\nconnection: close\r\n\r\n", body.n); b_str(&req, line);
  b_put(&req, body.p ? body.p : "", body.n);
  signal(SIGPIPE, SIG_IGN);
  /* --repeat N: the same request N times in a row; prints "<status> <count>" lines, not bodies. */
  int counts[600] = {0}, failures = 0;
  buf_t res = {0};
  for (long round = 0; round < repeat; round++) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET; a.sin_port = htons((uint16_t)port); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) { if (repeat == 1) { perror("sandcast-gateway: connect"); return 7; } failures++; if (fd >= 0) close(fd); continue; }
    write_all(fd, req.p, req.n);
    res.n = 0; char c[65536]; ssize_t r;
    while ((r = read(fd, c, sizeof c)) > 0) b_put(&res, c, (size_t)r);
    close(fd);
    int status = res.n >= 12 && !memcmp(res.p, "HTTP/1.1 ", 9) ? atoi(res.p + 9) : 0;
    if (status >= 100 && status < 600) counts[status]++; else failures++;
  }
  if (repeat > 1) {
    for (int s = 100; s < 600; s++) if (counts[s]) printf("%d %d\n", s, counts[s]);
    if (failures) printf("failed %d\n", failures);
    return 0;
  }
  char *split = res.n >= 4 ? memmem(res.p, res.n, "\r\n\r\n", 4) : NULL;
  if (!split) { fprintf(stderr, "sandcast-gateway: no HTTP answer\n"); return 8; }
  size_t off = include ? 0 : (size_t)(split - res.p) + 4;
  write_all(1, res.p + off, res.n - off);
  return 0;
}

static long num_arg(const char *s, long lo, long hi, const char *what) {
  char *end; long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) { fprintf(stderr, "sandcast-gateway: %s must be %ld-%ld\n", what, lo, hi); exit(2); }
  return v;
}
int main(int argc, char **argv) {
  if (argc < 2) goto usage;
  const char *mode = argv[1]; int64_t wait_timeout = 25000; int wait_max = 64, ids_at = argc;
  if (!strcmp(mode, "decode")) {
    if (argc == 4 && !strcmp(argv[2], "--max-frame-bytes")) max_frame = (size_t)num_arg(argv[3], 1, MAX_FRAME, "--max-frame-bytes");
    return run_decode();
  }
  if (!strcmp(mode, "request")) return run_request(argc, argv);
  for (int i = 2; i < argc; i++) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(k, "--daemon")) { cfg.daemon = 1; continue; }
    if (!strcmp(k, "--")) { ids_at = i + 1; break; }
    if (!v) goto usage;
    i++;
    if (!strcmp(k, "--port")) cfg.port = (int)num_arg(v, 1, 65535, "--port");
    else if (!strcmp(k, "--nonce")) cfg.nonce = v;
    else if (!strcmp(k, "--spool")) cfg.spool = v;
    else if (!strcmp(k, "--max")) wait_max = (int)num_arg(v, 1, 1024, "--max");
    else if (!strcmp(k, "--max-body")) cfg.max_body = (size_t)num_arg(v, 0, 1024 * 1024, "--max-body");
    else if (!strcmp(k, "--max-conns")) cfg.max_conns = (int)num_arg(v, 1, 1024, "--max-conns");
    else if (!strcmp(k, "--max-depth")) cfg.max_depth = (int)num_arg(v, 1, 1024, "--max-depth");
    else if (!strcmp(k, "--wait-ms") && strcmp(mode, "wait")) cfg.wait_ms = num_arg(v, 10, 600000, "--wait-ms");
    else if (!strcmp(k, "--heartbeat-ms")) cfg.hb_ms = num_arg(v, 10, 600000, "--heartbeat-ms");
    else if (!strcmp(k, "--wait-ms") && !strcmp(mode, "wait")) wait_timeout = num_arg(v, 0, 600000, "--wait-ms");
    else goto usage;
  }
  if (strlen(cfg.spool) > 256 || cfg.spool[0] != '/') { fprintf(stderr, "sandcast-gateway: --spool must be an absolute path\n"); return 2; }
  if (!strcmp(mode, "wait")) return run_wait(wait_max, wait_timeout);
  if (!strcmp(mode, "commit")) return run_commit(argc, argv, ids_at);
  if (!strcmp(mode, "duplex") || !strcmp(mode, "queue")) {
    duplex_mode = !strcmp(mode, "duplex");
    if (!cfg.port || (duplex_mode && (!cfg.nonce || strlen(cfg.nonce) > 64))) goto usage;
    return run_server();
  }
usage:
  fprintf(stderr, "usage: sandcast-gateway duplex --port P --nonce HEX | queue --port P [--spool DIR] [--daemon] |\n"
                  "       wait [--spool DIR] [--max N] [--wait-ms T] | commit [--spool DIR] -- ID... | request ... | decode\n");
  return 2;
}
