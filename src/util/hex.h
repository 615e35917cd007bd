/*
 * hex.h -- lower-case hexadecimal, the one spelling of digests, tokens and
 * ids in Smriti (checkpoint hashes, bundle digests, token secrets, cookies).
 */
#ifndef SMRITI_HEX_H
#define SMRITI_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 2n lower-case hex digits of b[0..n) and a NUL to out[0..2n]. */
void hex_encode(const uint8_t *b, size_t n, char *out);

/* The same 2n digits without the NUL: for a place inside a longer text. */
void hex_digits(const uint8_t *b, size_t n, char *out);

/* How many of s's leading characters are lower-case hex digits. */
size_t hex_span(const char *s);

/* The n bytes of s's first 2n lower-case hex digits into out; -1 (out undefined) if s has fewer. */
int hex_decode(const char *s, size_t n, uint8_t *out);

#endif
