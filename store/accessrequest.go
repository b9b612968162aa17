package store

import (
	"context"
	"time"

	"github.com/flightgraph/flightgraph"
)

const accessRequestCols = `id, account_id, product, description, expected_use, status, role, reply, reviewed_by, created_at, reviewed_at`

// AccessRequest implements flightgraph.AccessReader.
func (a accessQ) AccessRequest(ctx context.Context, id string) (*flightgraph.AccessRequest, error) {
	var r flightgraph.AccessRequest
	return &r, a.one(ctx, &r, "access request", `SELECT `+accessRequestCols+` FROM access_requests WHERE id = ?`, id)
}

// AccessRequests implements flightgraph.AccessReader.
func (a accessQ) AccessRequests(ctx context.Context, status flightgraph.AccessRequestStatus, limit int) ([]*flightgraph.AccessRequest, error) {
	var rows []*flightgraph.AccessRequest
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+accessRequestCols+` FROM access_requests WHERE ? = '' OR status = ?
		ORDER BY created_at DESC, id LIMIT ?`, status, status, limit)
	return rows, err
}

// AccessRequestsByAccount implements flightgraph.AccessReader.
func (a accessQ) AccessRequestsByAccount(ctx context.Context, accountID string, limit int) ([]*flightgraph.AccessRequest, error) {
	var rows []*flightgraph.AccessRequest
	err := a.db.selectIn(ctx, a.q, &rows, `SELECT `+accessRequestCols+` FROM access_requests WHERE account_id = ?
		ORDER BY created_at DESC, id LIMIT ?`, accountID, limit)
	return rows, err
}

// CreateAccessRequest implements flightgraph.AccessTx.
func (t *accessTx) CreateAccessRequest(ctx context.Context, r *flightgraph.AccessRequest) error {
	_, err := t.db.exec(ctx, t.q, `INSERT INTO access_requests (`+accessRequestCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.AccountID, r.Product, r.Description, r.ExpectedUse, r.Status, r.Role, r.Reply, r.ReviewedBy, r.CreatedAt.UTC(), utcPtr(r.ReviewedAt))
	return err
}

// UpdateAccessRequest implements flightgraph.AccessTx.
func (t *accessTx) UpdateAccessRequest(ctx context.Context, r *flightgraph.AccessRequest) error {
	_, err := t.db.exec(ctx, t.q, `UPDATE access_requests SET status = ?, role = ?, reply = ?, reviewed_by = ?, reviewed_at = ? WHERE id = ?`,
		r.Status, r.Role, r.Reply, r.ReviewedBy, utcPtr(r.ReviewedAt), r.ID)
	return err
}

// ClaimRequestToken implements flightgraph.AccessTx. The insert does nothing on a token used
// already, rather than failing, so that a PostgreSQL transaction is not aborted by it.
func (t *accessTx) ClaimRequestToken(ctx context.Context, accountID, token string, now time.Time) error {
	if _, err := t.db.exec(ctx, t.q, `DELETE FROM request_tokens WHERE account_id = ? AND created_at < ?`,
		accountID, now.Add(-flightgraph.RequestTokenTTL).UTC()); err != nil {
		return err
	}
	res, err := t.db.exec(ctx, t.q, `INSERT INTO request_tokens (account_id, token, created_at) VALUES (?, ?, ?)
		ON CONFLICT (account_id, token) DO NOTHING`, accountID, token, now.UTC())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return flightgraph.ErrExists
	}
	return nil
}
