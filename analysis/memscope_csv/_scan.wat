;; Row framing of the msMemScope CSV reader, in WebAssembly because a
;; JavaScript byte loop tops out well below disk speed. `scan` walks bytes
;; [p, end) of its memory 64 at a time and writes one 64-byte record per
;; kept non-empty row at `out` (i32 slots):
;;   0 start, 1 end (a trailing \r left out), 2 line number of the row's
;;   first line, 3 separator count, 4..15 the first 12 separators (commas
;;   outside quotes).
;; With filter field f1 (and f2) not -1, a row is kept only when that
;; field's first character (after an opening quote) has its bit set in the
;; 256-bit map at bm (at bm+32 for f2); rows are counted in global `total`
;; either way.
;; It stops after `max` records or at a row the bytes do not finish (unless
;; `last`, when the rest is the final row); global `stop` is where the next
;; call starts and global `line` the line number there. The 63 bytes after
;; `end` are read (and ignored): keep them inside the memory. Regenerate the
;; module with `deno run -A analysis/memscope_csv/_scan_build.ts` after an edit.
;;
;; Per 64 bytes: bit masks of quotes and newlines (and commas when not
;; filtering); a prefix XOR of the quote mask marks the bytes inside quotes
;; (as simdjson does), so only newlines and commas outside quotes are
;; visited, one bit at a time. When filtering, most rows are dropped after a
;; look at their first fields, and only kept rows are searched for commas
;; (64 bytes at a time again).
;; `memoryNumbers` parses the numbers of one kept record (MemscopeRow's
;; memoryNumbers): a JavaScript digit loop costs several times as much.
(module
  (memory (export "memory") 1)
  (global $stop (export "stop") (mut i32) (i32.const 0))
  (global $line (export "line") (mut i32) (i32.const 0))
  (global $total (export "total") (mut i32) (i32.const 0))

  ;; Bit i set where byte i of the 64 in $v0..$v3 equals $c.
  (func $mask (param $v0 v128) (param $v1 v128) (param $v2 v128) (param $v3 v128)
    (param $c v128) (result i64)
    (i64.or
      (i64.or
        (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v0) (local.get $c))))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v1) (local.get $c)))) (i64.const 16)))
      (i64.or
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v2) (local.get $c)))) (i64.const 32))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (i8x16.eq (local.get $v3) (local.get $c)))) (i64.const 48)))))

  ;; Writes the separators of row [$s, $e) at $rec+16 (12 at most); returns
  ;; how many. 64 bytes at a time, as `scan` finds them.
  (func $seps (param $s i32) (param $e i32) (param $rec i32) (result i32)
    (local $n i32) (local $base i32) (local $left i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $mq i64) (local $mc i64) (local $x i64) (local $inq i64) (local $m i64)
    (local.set $base (local.get $s))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $base) (local.get $e)))
        (local.set $v0 (v128.load align=1 (local.get $base)))
        (local.set $v1 (v128.load offset=16 align=1 (local.get $base)))
        (local.set $v2 (v128.load offset=32 align=1 (local.get $base)))
        (local.set $v3 (v128.load offset=48 align=1 (local.get $base)))
        (local.set $mq (call $mask (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
          (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))
        (local.set $mc (call $mask (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
          (v128.const i8x16 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c)))
        (local.set $left (i32.sub (local.get $e) (local.get $base)))
        (if (i32.lt_u (local.get $left) (i32.const 64))
          (then
            (local.set $x (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $left))) (i64.const 1)))
            (local.set $mq (i64.and (local.get $mq) (local.get $x)))
            (local.set $mc (i64.and (local.get $mc) (local.get $x)))))
        ;; bit i of x: odd number of quotes at or before byte i
        (local.set $x (local.get $mq))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 1))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 2))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 4))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 8))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 16))))
        (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 32))))
        (local.set $m (i64.and (local.get $mc)
          (i64.xor (i64.xor (local.get $x) (i64.sub (i64.const 0) (local.get $inq))) (i64.const -1))))
        (local.set $inq
          (i64.xor (local.get $inq) (i64.and (i64.popcnt (local.get $mq)) (i64.const 1))))
        (block $bits_done
          (loop $bits
            (br_if $bits_done (i64.eqz (local.get $m)))
            (i32.store offset=16
              (i32.add (local.get $rec) (i32.shl (local.get $n) (i32.const 2)))
              (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $m)))))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))
            (br_if $done (i32.eq (local.get $n) (i32.const 12)))
            (local.set $m (i64.and (local.get $m) (i64.sub (local.get $m) (i64.const 1))))
            (br $bits)))
        (local.set $base (i32.add (local.get $base) (i32.const 64)))
        (br $block)))
    (local.get $n))

  ;; Whether field $f of row [$s, $e) starts with a character whose bit is
  ;; set in the map at $bm ($f -1: yes).
  (func $starts (param $s i32) (param $e i32) (param $f i32) (param $bm i32)
    (result i32)
    (local $q i32) (local $c i32)
    (if (i32.lt_s (local.get $f) (i32.const 0)) (then (return (i32.const 1))))
    (block $found
      (loop $walk
        (br_if $found (i32.eqz (local.get $f)))
        (if (i32.ge_u (local.get $s) (local.get $e)) (then (return (i32.const 0))))
        (local.set $c (i32.load8_u (local.get $s)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (if (i32.eq (local.get $c) (i32.const 0x22))
          (then (local.set $q (i32.xor (local.get $q) (i32.const 1))))
          (else
            (if (i32.and (i32.eq (local.get $c) (i32.const 0x2c)) (i32.eqz (local.get $q)))
              (then (local.set $f (i32.sub (local.get $f) (i32.const 1)))))))
        (br $walk)))
    (if (i32.ge_u (local.get $s) (local.get $e)) (then (return (i32.const 0))))
    (local.set $c (i32.load8_u (local.get $s)))
    (if (i32.and (i32.eq (local.get $c) (i32.const 0x22))
          (i32.lt_u (i32.add (local.get $s) (i32.const 1)) (local.get $e)))
      (then (local.set $c (i32.load8_u offset=1 (local.get $s)))))
    (i32.and
      (i32.shr_u
        (i32.load8_u (i32.add (local.get $bm) (i32.shr_u (local.get $c) (i32.const 3))))
        (i32.and (local.get $c) (i32.const 7)))
      (i32.const 1)))

  ;; Ends the row [$s, $p) (a \r before $p left out): counts it, and writes
  ;; its record at $rec when it is not empty and passes the filter. Returns
  ;; 1 when a record was written.
  (func $row (param $s i32) (param $p i32) (param $rowline i32) (param $nsep i32)
    (param $rec i32) (param $f1 i32) (param $f2 i32) (param $bm i32) (result i32)
    (local $e i32)
    (local.set $e (local.get $p))
    (if (i32.gt_u (local.get $e) (local.get $s))
      (then
        (if (i32.eq (i32.load8_u (i32.sub (local.get $e) (i32.const 1))) (i32.const 0x0d))
          (then (local.set $e (i32.sub (local.get $e) (i32.const 1)))))))
    (if (i32.le_u (local.get $e) (local.get $s)) (then (return (i32.const 0))))
    (global.set $total (i32.add (global.get $total) (i32.const 1)))
    (if (i32.ge_s (local.get $f1) (i32.const 0))
      (then
        (if (i32.eqz (call $starts (local.get $s) (local.get $e) (local.get $f1) (local.get $bm)))
          (then (return (i32.const 0))))
        (if (i32.eqz (call $starts (local.get $s) (local.get $e) (local.get $f2)
              (i32.add (local.get $bm) (i32.const 32))))
          (then (return (i32.const 0))))
        (local.set $nsep (call $seps (local.get $s) (local.get $e) (local.get $rec)))))
    (i32.store offset=0 (local.get $rec) (local.get $s))
    (i32.store offset=4 (local.get $rec) (local.get $e))
    (i32.store offset=8 (local.get $rec) (local.get $rowline))
    (i32.store offset=12 (local.get $rec) (local.get $nsep))
    (i32.const 1))

  (func (export "scan")
    (param $p i32) (param $end i32) (param $last i32) (param $line i32)
    (param $out i32) (param $max i32) (param $f1 i32) (param $f2 i32)
    (param $bm i32) (result i32)
    (local $rows i32) (local $start i32) (local $inq i64) (local $nsep i32)
    (local $rec i32) (local $rowline i32) (local $base i32) (local $n i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $mq i64) (local $mc i64) (local $mn i64)
    (local $x i64) (local $inside i64) (local $m i64) (local $bit i64)
    (local $pos i32) (local $kept i32)
    (local.set $start (local.get $p))
    (local.set $rowline (local.get $line))
    (local.set $rec (local.get $out))
    (local.set $base (local.get $p))
    (block $done
      (br_if $done (i32.eqz (local.get $max)))
      (block $eof
        (loop $block
          (br_if $eof (i32.ge_u (local.get $base) (local.get $end)))
          (local.set $v0 (v128.load align=1 (local.get $base)))
          (local.set $v1 (v128.load offset=16 align=1 (local.get $base)))
          (local.set $v2 (v128.load offset=32 align=1 (local.get $base)))
          (local.set $v3 (v128.load offset=48 align=1 (local.get $base)))
          (local.set $mq (call $mask (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
            (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22)))
          (local.set $mn (call $mask (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
            (v128.const i8x16 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a)))
          (local.set $mc (i64.const 0))
          (if (i32.lt_s (local.get $f1) (i32.const 0))
            (then
              (local.set $mc (call $mask (local.get $v0) (local.get $v1) (local.get $v2) (local.get $v3)
                (v128.const i8x16 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c)))))
          (local.set $n (i32.sub (local.get $end) (local.get $base)))
          (if (i32.lt_u (local.get $n) (i32.const 64))
            (then
              (local.set $x (i64.sub (i64.shl (i64.const 1) (i64.extend_i32_u (local.get $n))) (i64.const 1)))
              (local.set $mq (i64.and (local.get $mq) (local.get $x)))
              (local.set $mc (i64.and (local.get $mc) (local.get $x)))
              (local.set $mn (i64.and (local.get $mn) (local.get $x)))))
          ;; bit i of x: odd number of quotes at or before byte i
          (local.set $x (local.get $mq))
          (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 1))))
          (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 2))))
          (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 4))))
          (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 8))))
          (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 16))))
          (local.set $x (i64.xor (local.get $x) (i64.shl (local.get $x) (i64.const 32))))
          (local.set $inside
            (i64.xor (local.get $x) (i64.sub (i64.const 0) (local.get $inq))))
          (local.set $inq
            (i64.xor (local.get $inq) (i64.and (i64.popcnt (local.get $mq)) (i64.const 1))))
          (local.set $m
            (i64.or
              (i64.and (local.get $mc) (i64.xor (local.get $inside) (i64.const -1)))
              (local.get $mn)))
          (block $bits_done
            (loop $bits
              (br_if $bits_done (i64.eqz (local.get $m)))
              (local.set $bit (i64.and (local.get $m) (i64.sub (i64.const 0) (local.get $m))))
              (local.set $pos (i32.add (local.get $base) (i32.wrap_i64 (i64.ctz (local.get $m)))))
              (local.set $m (i64.xor (local.get $m) (local.get $bit)))
              (if (i64.ne (i64.and (local.get $mc) (local.get $bit)) (i64.const 0))
                (then
                  (if (i32.lt_u (local.get $nsep) (i32.const 12))
                    (then
                      (i32.store offset=16
                        (i32.add (local.get $rec) (i32.shl (local.get $nsep) (i32.const 2)))
                        (local.get $pos))
                      (local.set $nsep (i32.add (local.get $nsep) (i32.const 1)))))
                  (br $bits)))
              (local.set $line (i32.add (local.get $line) (i32.const 1)))
              ;; a newline inside quotes belongs to the row
              (br_if $bits (i64.ne (i64.and (local.get $inside) (local.get $bit)) (i64.const 0)))
              (local.set $kept
                (call $row (local.get $start) (local.get $pos) (local.get $rowline)
                  (local.get $nsep) (local.get $rec) (local.get $f1) (local.get $f2) (local.get $bm)))
              (local.set $rows (i32.add (local.get $rows) (local.get $kept)))
              (local.set $rec (i32.add (local.get $rec) (i32.shl (local.get $kept) (i32.const 6))))
              (local.set $start (i32.add (local.get $pos) (i32.const 1)))
              (local.set $rowline (local.get $line))
              (local.set $nsep (i32.const 0))
              (br_if $done (i32.ge_u (local.get $rows) (local.get $max)))
              (br $bits)))
          (local.set $base (i32.add (local.get $base) (i32.const 64)))
          (br $block)))
      ;; The input ended inside a row: it is the last row, or it waits for
      ;; more bytes (its lines are counted again then).
      (if (i32.eqz (local.get $last))
        (then
          (local.set $line (local.get $rowline))
          (br $done)))
      (local.set $rows
        (i32.add (local.get $rows)
          (call $row (local.get $start) (local.get $end) (local.get $rowline)
            (local.get $nsep) (local.get $rec) (local.get $f1) (local.get $f2) (local.get $bm))))
      (local.set $start (local.get $end)))
    (global.set $stop (local.get $start))
    (global.set $line (local.get $line))
    (local.get $rows))
  ;; ---- Numbers of memory rows (MemscopeRow.memoryNumbers) ----

  ;; Start of field $c of the row whose record is at $rec.
  (func $fstart (param $rec i32) (param $c i32) (result i32)
    (if (result i32) (i32.eqz (local.get $c))
      (then (i32.load (local.get $rec)))
      (else (i32.add (i32.load offset=12
        (i32.add (local.get $rec) (i32.shl (local.get $c) (i32.const 2)))) (i32.const 1)))))

  ;; End of field $c ($nsep separators in the record).
  (func $fend (param $rec i32) (param $c i32) (param $nsep i32) (result i32)
    (if (result i32) (i32.lt_s (local.get $c) (local.get $nsep))
      (then (i32.load offset=16 (i32.add (local.get $rec) (i32.shl (local.get $c) (i32.const 2)))))
      (else (i32.load offset=4 (local.get $rec)))))

  ;; Plain decimal digits [$s, $e), 1 to 16 of them, up to 2^53 - 1; -1 else.
  (func $dec (param $s i32) (param $e i32) (result i64)
    (local $n i64) (local $d i32)
    (if (i32.or (i32.ge_u (local.get $s) (local.get $e))
          (i32.gt_u (i32.sub (local.get $e) (local.get $s)) (i32.const 16)))
      (then (return (i64.const -1))))
    (loop $digits
      (local.set $d (i32.sub (i32.load8_u (local.get $s)) (i32.const 48)))
      (if (i32.gt_u (local.get $d) (i32.const 9)) (then (return (i64.const -1))))
      (local.set $n (i64.add (i64.mul (local.get $n) (i64.const 10)) (i64.extend_i32_u (local.get $d))))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br_if $digits (i32.lt_u (local.get $s) (local.get $e))))
    (if (i64.gt_u (local.get $n) (i64.const 9007199254740991)) (then (return (i64.const -1))))
    (local.get $n))

  ;; Hex digits [$s, $e) (any case), 1 to 16 of them, up to 2^53 - 1; -1 else.
  (func $hex (param $s i32) (param $e i32) (result i64)
    (local $n i64) (local $c i32) (local $d i32)
    (if (i32.or (i32.ge_u (local.get $s) (local.get $e))
          (i32.gt_u (i32.sub (local.get $e) (local.get $s)) (i32.const 16)))
      (then (return (i64.const -1))))
    (loop $digits
      (local.set $c (i32.load8_u (local.get $s)))
      (local.set $d (i32.sub (local.get $c) (i32.const 48)))
      (if (i32.gt_u (local.get $c) (i32.const 57))
        (then (local.set $d (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 87)))
          (if (i32.lt_u (local.get $d) (i32.const 10)) (then (return (i64.const -1))))))
      (if (i32.gt_u (local.get $d) (i32.const 15)) (then (return (i64.const -1))))
      (local.set $n (i64.or (i64.shl (local.get $n) (i64.const 4)) (i64.extend_i32_u (local.get $d))))
      (local.set $s (i32.add (local.get $s) (i32.const 1)))
      (br_if $digits (i32.lt_u (local.get $s) (local.get $e))))
    (if (i64.gt_u (local.get $n) (i64.const 9007199254740991)) (then (return (i64.const -1))))
    (local.get $n))

  ;; The numbers of the row at $rec: fields at the header positions in the
  ;; 8 i32 at $cols (ID, Timestamp, Process Id, Device Id, Ptr, Attr, then
  ;; the two stack columns, -2 when absent), written as 7 f64 at $out (see
  ;; MEM_* in row.ts). Returns 0, writing nothing useful, when any of them
  ;; is not written plainly.
  (func (export "memoryNumbers") (param $rec i32) (param $cols i32) (param $out i32)
    (result i32)
    (local $nsep i32) (local $k i32) (local $c i32) (local $s i32) (local $e i32)
    (local $n i64) (local $i i32) (local $v i32) (local $w i32) (local $neg i32)
    (local $stacks i32)
    (local.set $nsep (i32.load offset=12 (local.get $rec)))
    (loop $fields
      (local.set $c (i32.load (i32.add (local.get $cols) (i32.shl (local.get $k) (i32.const 2)))))
      (if (i32.gt_s (local.get $c) (local.get $nsep)) (then (return (i32.const 0))))
      (local.set $s (call $fstart (local.get $rec) (local.get $c)))
      (local.set $e (call $fend (local.get $rec) (local.get $c) (local.get $nsep)))
      (if (i32.and (i32.eq (local.get $k) (i32.const 4))
            (i32.and (i32.gt_s (i32.sub (local.get $e) (local.get $s)) (i32.const 2))
              (i32.and (i32.eq (i32.load8_u (local.get $s)) (i32.const 48))
                (i32.eq (i32.or (i32.load8_u offset=1 (local.get $s)) (i32.const 0x20)) (i32.const 120)))))
        (then (local.set $n (call $hex (i32.add (local.get $s) (i32.const 2)) (local.get $e))))
        (else
          (if (i32.and (i32.eq (local.get $k) (i32.const 1))
                (i32.ge_s (i32.sub (local.get $e) (local.get $s)) (i32.const 18)))
            (then
              ;; Nanoseconds: whole microseconds are all but the last 3 digits.
              (if (i64.lt_s (call $dec (i32.sub (local.get $e) (i32.const 3)) (local.get $e)) (i64.const 0))
                (then (return (i32.const 0))))
              (local.set $e (i32.sub (local.get $e) (i32.const 3)))))
          (local.set $n (call $dec (local.get $s) (local.get $e)))))
      (if (i64.lt_s (local.get $n) (i64.const 0)) (then (return (i32.const 0))))
      ;; A Device Id past rows.ts MAX_DEVICES is left to the general path.
      (if (i32.and (i32.eq (local.get $k) (i32.const 3)) (i64.ge_s (local.get $n) (i64.const 65536)))
        (then (return (i32.const 0))))
      (f64.store (i32.add (local.get $out) (i32.shl (local.get $k) (i32.const 3)))
        (f64.convert_i64_s (local.get $n)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $fields (i32.lt_u (local.get $k) (i32.const 5))))
    ;; Attr `size`: the first key `size` right after `{`, `,` or a space
    ;; and followed by `:` (findAttrValue's rule), its value up to `,`/`}`.
    (f64.store offset=40 (local.get $out) (f64.const 0))
    (local.set $c (i32.load offset=20 (local.get $cols)))
    (if (i32.le_s (local.get $c) (local.get $nsep))
      (then
        (local.set $s (call $fstart (local.get $rec) (local.get $c)))
        (local.set $e (call $fend (local.get $rec) (local.get $c) (local.get $nsep)))
        (if (i32.and (i32.ge_s (i32.sub (local.get $e) (local.get $s)) (i32.const 2))
              (i32.and (i32.eq (i32.load8_u (local.get $s)) (i32.const 34))
                (i32.eq (i32.load8_u (i32.sub (local.get $e) (i32.const 1))) (i32.const 34))))
          (then
            (local.set $s (i32.add (local.get $s) (i32.const 1)))
            (local.set $e (i32.sub (local.get $e) (i32.const 1)))))
        (local.set $i (local.get $s))
        (local.set $v (i32.const -1))
        (block $found
          (loop $search
            (br_if $found (i32.ge_s (i32.add (local.get $i) (i32.const 4)) (local.get $e)))
            ;; "size" then ":" (little-endian i32 of "size" is 0x657a6973)
            (if (i32.and
                  (i32.eq (i32.load align=1 (local.get $i)) (i32.const 0x657a6973))
                  (i32.eq (i32.load8_u offset=4 (local.get $i)) (i32.const 58)))
              (then
                (local.set $c (i32.const 123))
                (if (i32.gt_u (local.get $i) (local.get $s))
                  (then (local.set $c (i32.load8_u (i32.sub (local.get $i) (i32.const 1))))))
                (if (i32.or (i32.eq (local.get $c) (i32.const 123))
                      (i32.or (i32.eq (local.get $c) (i32.const 44)) (i32.eq (local.get $c) (i32.const 32))))
                  (then
                    (local.set $v (i32.add (local.get $i) (i32.const 5)))
                    (br $found)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $search)))
        (if (i32.ge_s (local.get $v) (i32.const 0))
          (then
            (block $sp (loop $spaces
              (br_if $sp (i32.ge_u (local.get $v) (local.get $e)))
              (br_if $sp (i32.ne (i32.load8_u (local.get $v)) (i32.const 32)))
              (local.set $v (i32.add (local.get $v) (i32.const 1)))
              (br $spaces)))
            (local.set $w (local.get $v))
            (block $val (loop $value
              (br_if $val (i32.ge_u (local.get $w) (local.get $e)))
              (local.set $c (i32.load8_u (local.get $w)))
              (br_if $val (i32.or (i32.eq (local.get $c) (i32.const 44)) (i32.eq (local.get $c) (i32.const 125))))
              (local.set $w (i32.add (local.get $w) (i32.const 1)))
              (br $value)))
            (if (i32.and (i32.lt_u (local.get $v) (local.get $w))
                  (i32.eq (i32.load8_u (local.get $v)) (i32.const 45)))
              (then
                (local.set $neg (i32.const 1))
                (local.set $v (i32.add (local.get $v) (i32.const 1)))))
            (local.set $n (call $dec (local.get $v) (local.get $w)))
            (if (i64.lt_s (local.get $n) (i64.const 0)) (then (return (i32.const 0))))
            (if (local.get $neg)
              (then (f64.store offset=40 (local.get $out) (f64.neg (f64.convert_i64_s (local.get $n)))))
              (else (f64.store offset=40 (local.get $out) (f64.convert_i64_s (local.get $n)))))))))
    ;; Whether a stack column holds text.
    (local.set $k (i32.const 6))
    (loop $stack
      (local.set $c (i32.load (i32.add (local.get $cols) (i32.shl (local.get $k) (i32.const 2)))))
      (if (i32.and (i32.ge_s (local.get $c) (i32.const 0)) (i32.le_s (local.get $c) (local.get $nsep)))
        (then
          (if (i32.gt_u (call $fend (local.get $rec) (local.get $c) (local.get $nsep))
                (call $fstart (local.get $rec) (local.get $c)))
            (then (local.set $stacks (i32.const 1))))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $stack (i32.lt_u (local.get $k) (i32.const 8))))
    (f64.store offset=48 (local.get $out) (f64.convert_i32_u (local.get $stacks)))
    (i32.const 1))
)
