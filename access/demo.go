package access

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/flightgraph/flightgraph"
)

// DemoCredentials are the accounts and key made for a demo store; the JSON names are the ones
// the demo-credentials.json file promises.
type DemoCredentials struct {
	APIKey            string `json:"apiKey"`
	ClientID          string `json:"clientId"`
	ClientSecret      string `json:"clientSecret"`
	CustomerUsername  string `json:"customerUsername"`
	CustomerPassword  string `json:"customerPassword"`
	CustomerID        string `json:"customerId"`
	DeveloperEmail    string `json:"developerEmail"`
	DeveloperPassword string `json:"developerPassword"`
	OperatorEmail     string `json:"operatorEmail"`
	OperatorPassword  string `json:"operatorPassword"`
}

// SeedDemo creates, in one transaction, a demo operator, a demo developer with an application
// whose key is approved for every public API, and a demo loyalty customer, all with fresh random
// passwords. It returns ECodeConflict when the demo accounts exist already.
func (s *Service) SeedDemo(ctx context.Context) (*DemoCredentials, error) {
	now := s.now()
	d := &DemoCredentials{
		DeveloperEmail: "developer@demo.flightgraph.local", DeveloperPassword: randomPassword(),
		OperatorEmail: "operator@demo.flightgraph.local", OperatorPassword: randomPassword(),
		CustomerUsername: "demo.customer", CustomerPassword: randomPassword(), CustomerID: "1000000001",
	}
	// The demo accounts exist already on every start but the first: tell so before spending three
	// password hashes on them (the insert below still refuses a race).
	if _, err := s.Store.AccountByEmail(ctx, d.OperatorEmail); err == nil {
		return nil, exists(flightgraph.ErrExists, "the demo accounts exist already")
	} else if !errIsNotFound(err) {
		return nil, err
	}
	var hashes [3]string
	for i, pw := range []string{d.DeveloperPassword, d.OperatorPassword, d.CustomerPassword} {
		var err error
		if hashes[i], err = s.Hashes.Hash(ctx, s.Hasher, pw); err != nil {
			return nil, err
		}
	}
	dev := &flightgraph.Account{ID: NewID("acc"), Email: d.DeveloperEmail, Name: "Demo Developer", Role: flightgraph.RoleDeveloper,
		PasswordHash: hashes[0], CreatedAt: now}
	op := &flightgraph.Account{ID: NewID("acc"), Email: d.OperatorEmail, Name: "Demo Operator", Role: flightgraph.RoleOperator,
		PasswordHash: hashes[1], CreatedAt: now}
	cust := &flightgraph.Customer{ID: d.CustomerID, Username: d.CustomerUsername, Name: "Demo Customer", Tier: "GOLD",
		PasswordHash: hashes[2]}
	app := &flightgraph.Application{ID: NewID("app"), AccountID: dev.ID, Name: "Demo application", Website: "https://example.com",
		Description: "Made on the first start of the embedded store, to try every public API.", CreatedAt: now, UpdatedAt: now}
	d.APIKey, d.ClientSecret = NewCredential(KindAPIKey), NewCredential(KindSecret)
	d.ClientID = d.APIKey
	key := &flightgraph.Key{ID: NewID("key"), ApplicationID: app.ID, Hint: Hint(d.APIKey), KeyHash: HashCredential(d.APIKey),
		SecretHash: HashCredential(d.ClientSecret), Status: flightgraph.KeyActive, CreatedAt: now}
	err := s.Store.InTx(ctx, func(tx flightgraph.AccessTx) error {
		for _, a := range []*flightgraph.Account{op, dev} {
			if err := tx.CreateAccount(ctx, a); err != nil {
				return exists(err, "the demo accounts exist already")
			}
			if err := s.audit(ctx, tx, "system", "account.create", "account", a.ID, nil, a); err != nil {
				return err
			}
		}
		if err := tx.CreateCustomer(ctx, cust); err != nil {
			return exists(err, "the demo customer exists already")
		}
		if err := tx.CreateApplication(ctx, app); err != nil {
			return err
		}
		if err := tx.CreateKey(ctx, key); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, "system", "key.create", "key", key.ID, nil, key); err != nil {
			return err
		}
		for _, p := range Products {
			if p.Visibility != flightgraph.VisibilityPublic {
				continue
			}
			plan, err := standardPlan(p.Slug, flightgraph.DefaultPlan)
			if err != nil {
				return err
			}
			decided := now
			sub := &flightgraph.Subscription{ID: NewID("sub"), KeyID: key.ID, Product: p.Slug, PlanID: plan.ID,
				Status: flightgraph.SubscriptionApproved, CreatedAt: now, DecidedAt: &decided, DecidedBy: op.ID, Reason: "demo"}
			if err := tx.CreateSubscription(ctx, sub); err != nil {
				return err
			}
			if err := s.audit(ctx, tx, "system", "subscription.approved", "subscription", sub.ID, nil, sub); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("demo accounts: %w", err)
	}
	return d, nil
}

// randomPassword returns 16 random bytes in URL-safe base64: 22 characters.
func randomPassword() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
