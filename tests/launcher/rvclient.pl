#!/usr/bin/perl
# rvclient.pl — a stranger at a Loom rendezvous: connects, checks the
# server's HELLO, sends one frame that does not prove the job key, and
# prints the server's answer ("REFUSE <reason>", "EOF", or the frame type).
# Usage: rvclient.pl HOST:PORT MODE, MODE one of
#   zero-mac  a well-formed JOIN whose MAC is all zeros (no key)
#   short     a JOIN too short to hold a MAC
#   ping      a PING before joining
# Frames (lib/frame.c): u32 little-endian length of type + payload, u8 type,
# payload.  Types: 1 HELLO, 2 JOIN, 4 REFUSE, 5 PING.
use strict;
use warnings;
use IO::Socket::INET;

my ($hostport, $mode) = @ARGV;
die "usage: rvclient.pl HOST:PORT zero-mac|short|ping\n" unless $mode;
my $s = IO::Socket::INET->new(PeerAddr => $hostport, Timeout => 5)
    or die "rvclient: cannot connect to $hostport: $!\n";

sub readn {
    my ($n) = @_;
    my $b = '';
    while (length $b < $n) {
        my $r = sysread($s, my $c, $n - length $b);
        return undef unless $r;
        $b .= $c;
    }
    return $b;
}

sub frame {
    my $h = readn(5);
    return () unless defined $h;
    my ($len, $type) = unpack 'VC', $h;
    my $p = $len > 1 ? readn($len - 1) : '';
    return defined $p ? ($type, $p) : ();
}

sub send_frame {
    my ($type, $payload) = @_;
    syswrite($s, pack('VC', 1 + length $payload, $type) . $payload);
}

my ($t, $p) = frame();
die "rvclient: no HELLO from $hostport\n" unless defined $t && $t == 1 && substr($p, 0, 4) eq 'LOOM';
if ($mode eq 'zero-mac') {
    # mac[16] nonce[16] rank nranks pid | u8 hostlen host | u32 alen addr
    send_frame(2, ("\0" x 16) . ("n" x 16) . pack('VVV', 1, 2, $$) . pack('C', 8) . 'stranger'
                  . pack('V', 4) . 'addr');
} elsif ($mode eq 'short') {
    send_frame(2, 'no key');
} elsif ($mode eq 'ping') {
    send_frame(5, '');
} else {
    die "rvclient: unknown mode $mode\n";
}
($t, $p) = frame();
if (!defined $t) {
    print "EOF\n";
} elsif ($t == 4) {
    print "REFUSE $p\n";
} else {
    print "frame type $t\n";
}
