// Package fairqueuing is the dispatcher of one API Priority and Fairness
// priority level: a set of queues that requests are shuffle-sharded into
// by their flow, served in order of virtual finish time, each request
// taking as many seats of the level's concurrency limit as its width.
package fairqueuing

import (
	"fmt"
	"math"
)

// maxHandSize is the largest hand the API allows (queuing.handSize).
const maxHandSize = 15

// Dealer deals hands of distinct queue indices from a deck of queues.
// A flow always gets the same hand for the same hash, so its requests
// stay in a few queues while other flows' hands rarely coincide.
type Dealer struct {
	deckSize, handSize int
}

// NewDealer returns a dealer of handSize cards from deckSize. The hash
// must hold enough entropy for the combination (at most 60 bits), as
// kube's validation of priority levels also checks.
func NewDealer(deckSize, handSize int) (Dealer, error) {
	switch {
	case deckSize <= 0 || handSize <= 0:
		return Dealer{}, fmt.Errorf("deckSize %d or handSize %d is not positive", deckSize, handSize)
	case handSize > deckSize:
		return Dealer{}, fmt.Errorf("handSize %d is greater than deckSize %d", handSize, deckSize)
	case handSize > maxHandSize:
		return Dealer{}, fmt.Errorf("handSize %d is greater than %d", handSize, maxHandSize)
	case math.Ceil(math.Log2(float64(deckSize))*float64(handSize)) > 60:
		return Dealer{}, fmt.Errorf("required entropy bits of deckSize %d and handSize %d is greater than 60", deckSize, handSize)
	}
	return Dealer{deckSize: deckSize, handSize: handSize}, nil
}

// DealIntoHand appends the hand of hash to hand[:0] and returns it. The
// hash is read as a number in a mixed radix (deckSize, deckSize-1, ...):
// each digit picks one of the cards not dealt yet, which is the same hand
// kube's dealer gives for the same hash.
func (d Dealer) DealIntoHand(hash uint64, hand []int) []int {
	var digits [maxHandSize]int
	for i := 0; i < d.handSize; i++ {
		radix := uint64(d.deckSize - i)
		digits[i] = int(hash % radix)
		hash /= radix
	}
	hand = hand[:0]
	for i := 0; i < d.handSize; i++ {
		// Digit i indexes the cards left after i were taken: skip over
		// every earlier card at or below it.
		card := digits[i]
		for j := i - 1; j >= 0; j-- {
			if card >= digits[j] {
				card++
			}
		}
		hand = append(hand, card)
	}
	return hand
}
