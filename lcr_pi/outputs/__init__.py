"""What the table hears and sees: speech (espeak-ng or printed words), cue sounds, and the seat LEDs."""
