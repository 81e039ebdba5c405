package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// priceFlags are --price-kwh and --currency: the tariff a result's
// energy is priced at (issue #49), for run and report alike.
type priceFlags struct {
	perKWh   float64
	currency string
}

func (p *priceFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&p.perKWh, "price-kwh", 0, "what a kWh costs you, like 0.32: a result with wall or GPU energy then says its cost per million output tokens (with --currency)")
	fs.StringVar(&p.currency, "currency", "", "the price's currency, like EUR or USD (with --price-kwh)")
}

// price is the tariff given, nil when neither flag was; an error names
// what is wrong with it.
func (p priceFlags) price() (*results.Price, error) {
	if p.perKWh == 0 && p.currency == "" {
		return nil, nil
	}
	if p.perKWh == 0 {
		return nil, fmt.Errorf("--currency needs --price-kwh, what a kWh costs, like --price-kwh 0.32")
	}
	pr, err := results.ParsePrice(p.perKWh, p.currency)
	if err != nil {
		return nil, fmt.Errorf("--price-kwh/--currency: %w", err)
	}
	return pr, nil
}

// printEnergy writes d's energy and cost table and its notes under its
// own table (plans.Energy: what the app and the reports show), then what
// its hardware did (plans.Hardware); nothing when its run read no power.
func printEnergy(w io.Writer, d plans.Doc, price *results.Price) {
	if t, notes := plans.Energy(d, price); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, results.EnergyTitle+":")
		printTable(w, *t)
		for _, n := range notes {
			fmt.Fprintln(w, "  "+strings.TrimSpace(n))
		}
	}
	if t := plans.Hardware(d); t != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, results.HardwareTitle+":")
		printTable(w, *t)
	}
}
