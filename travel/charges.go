package travel

import "github.com/flightgraph/flightgraph"

// AirportCharge is what the airports of a country charge per departing passenger with a seat,
// in euro cents: the passenger service charge to a near destination (Near: the same country, or
// another country of the EU or the Schengen area from one of them) and to any other (Far), and
// the security charge (0 where the passenger charge includes security, and no line is shown).
type AirportCharge struct {
	Near, Far, Security int64
	// Source names the published document the figures are taken from.
	Source string
}

// airportCharges holds one row per country of the network: the charges of its main airport for
// an originating adult (not a transfer passenger), which the table applies to every airport of
// the country (regional airports charge less; one row per country keeps the table small).
//
// The figures are the levels of the documents' 2025 editions named in each row (the airport's
// conditions of use or charges schedule, or the regulator's or the state's published rate where
// the charge is a levy), converted at fixed rates (EUR per unit: USD 0.92, GBP 1.17, CHF 1.06,
// DKK 0.134, SEK 0.087, NOK 0.085, PLN 0.233, CZK 0.040, ISK 0.0066, AED and QAR 0.25, SAR 0.245,
// BHD 2.44, JOD 1.30, MAD 0.092, DZD 0.0068, TND 0.30, ZAR 0.050, CAD 0.67, MXN 0.050,
// JPY 0.0061, KRW 0.00067, CNY 0.128, HKD 0.118, TWD 0.0285, SGD 0.685, THB 0.026, MYR 0.20,
// IDR 0.000057, PHP 0.016, INR 0.0108, AUD 0.60, NZD 0.55, XOF and XAF 0.001524, XPF 0.00838)
// and rounded to ten cents. Where a charge varies by terminal, hour or season the standard
// rate is used. They are reference levels for the demonstration network, compiled from those
// publications; check a row against the current edition before relying on it.
var airportCharges = map[string]AirportCharge{
	"AE": {2_750, 2_750, 130, "Dubai Airports, DXB airport charges 2025: passenger service charge AED 75 and passenger facility charge AED 35; passenger security and safety fee AED 5"},
	"AR": {900, 5_340, 740, "ORSNA, Aeropuertos Argentina tasas 2025 (EZE): tasa de uso de aeroestación international USD 58; tasa de seguridad USD 8"},
	"AT": {2_190, 2_190, 880, "Flughafen Wien, Tarifordnung 2025: Passagierentgelt; Sicherheitsentgelt"},
	"AU": {480, 1_860, 540, "Sydney Airport, aeronautical charges 2025: international passenger charge AUD 31, domestic AUD 8; passenger screening AUD 9"},
	"AW": {3_380, 3_380, 0, "Aruba Airport Authority, AUA passenger facility charges 2025: departing passenger USD 36.75, security included"},
	"BE": {2_330, 2_330, 970, "Brussels Airport Company, airport charges 2025: passenger charge; security charge"},
	"BG": {1_240, 1_240, 360, "Sofia Airport, tariff of airport charges 2025: passenger service charge; security charge"},
	"BH": {1_220, 1_220, 490, "Bahrain Airport Company, BAH airport charges 2025: passenger service charge BHD 5; security fee BHD 2"},
	"BJ": {2_290, 2_290, 460, "Aéroport de Cotonou, redevances 2025: redevance passagers XOF 15,000; redevance sûreté XOF 3,000"},
	"BQ": {3_500, 3_500, 0, "Bonaire International Airport, passenger facility charge 2025: USD 38, security included"},
	"BR": {600, 2_300, 0, "ANAC, tarifas aeroportuárias 2025 (GRU): tarifa de embarque international BRL 135, domestic BRL 35, security included"},
	"CA": {2_350, 2_350, 1_740, "GTAA, Toronto Pearson airport improvement fee 2025: CAD 35; Air Travellers Security Charge (CATSA) international CAD 25.91"},
	"CD": {4_600, 4_600, 460, "RVA, Kinshasa N'djili redevances 2025: redevance passagers USD 50; sûreté USD 5"},
	"CH": {2_650, 3_180, 1_060, "Flughafen Zürich, Gebührenreglement 2025: Passagiergebühr Europa CHF 25, übrige CHF 30; Sicherheitsgebühr CHF 10"},
	"CI": {2_130, 2_130, 610, "Aéroport d'Abidjan (AERIA), redevances 2025: redevance passagers XOF 14,000; sûreté XOF 4,000"},
	"CL": {900, 2_760, 0, "DGAC Chile, tasas de embarque 2025 (SCL): international USD 30, domestic CLP 9,500, security included"},
	"CM": {1_520, 1_520, 760, "ADC, Douala redevances 2025: redevance passagers XAF 10,000; sûreté XAF 5,000"},
	"CN": {640, 1_150, 0, "CAAC, civil aviation development fund 2025: international CNY 90, domestic CNY 50, security included"},
	"CO": {410, 4_510, 0, "Aerocivil and OPAIN, tasa aeroportuaria 2025 (BOG): international USD 49, domestic COP 18,000, security included"},
	"CR": {2_670, 2_670, 0, "Aeris, SJO airport usage fee 2025: USD 29, security included"},
	"CU": {2_300, 2_300, 0, "ECASA, HAV airport charge 2025: USD 25, security included"},
	"CW": {3_380, 3_380, 370, "Curaçao Airport Partners, CUR passenger facility charge 2025: USD 36.75; security charge USD 4"},
	"CY": {1_740, 1_740, 450, "Hermes Airports, Larnaca airport charges 2025: passenger charge; security charge"},
	"CZ": {1_400, 1_400, 480, "Letiště Praha, airport charges 2025: passenger charge CZK 350; security charge CZK 120"},
	"DE": {2_480, 3_460, 1_500, "Fraport, Flughafenentgelte Frankfurt 2025: Passagierentgelt kontinental, interkontinental; Luftsicherheitsgebühr (LuftSiGebV) EUR 15"},
	"DK": {1_680, 2_410, 740, "Copenhagen Airports, charges regulation 2025: passenger charge EU DKK 125, other DKK 180; security charge DKK 55"},
	"DO": {1_840, 1_840, 0, "Aerodom, SDQ airport facilities charge 2025: USD 20, security included"},
	"DZ": {1_020, 1_020, 310, "SGSIA, Alger redevances 2025: redevance passagers DZD 1,500; sûreté DZD 450"},
	"EC": {1_560, 5_380, 180, "Quiport, UIO tasas 2025: international departure USD 58.46, domestic USD 17; security USD 2"},
	"EE": {1_030, 1_030, 450, "Tallinn Airport, airport charges 2025: passenger charge; security charge"},
	"EG": {2_300, 2_300, 180, "Cairo Airport Company, charges 2025: passenger charge USD 25; security USD 2"},
	"ES": {1_210, 1_790, 570, "Aena, tarifas aeroportuarias 2025 (Madrid-Barajas): pasajeros salida EEE, otros; seguridad"},
	"ET": {2_760, 2_760, 460, "Ethiopian Airports Enterprise, ADD passenger service charge 2025: USD 30; security USD 5"},
	"FI": {1_460, 1_460, 860, "Finavia, Helsinki Airport charges 2025: passenger charge; security charge"},
	"FR": {1_360, 2_220, 1_150, "Groupe ADP, tarifs des redevances aéroportuaires 2025 (Paris-CDG): redevance par passager Schengen, autres; taxe d'aéroport (sûreté)"},
	"GA": {2_290, 2_290, 760, "GSEZ Airport, Libreville redevances 2025: redevance passagers XAF 15,000; sûreté XAF 5,000"},
	"GB": {4_330, 7_720, 0, "Heathrow Airport, Conditions of Use 2025: departing passenger charge European GBP 37, other GBP 66, security included"},
	"GF": {1_750, 1_750, 1_400, "CCI Guyane, Cayenne-Félix Eboué redevances 2025: redevance passagers; taxe d'aéroport"},
	"GH": {300, 4_600, 460, "Ghana Airports Company, ACC airport service charges 2025: international USD 50, domestic; security USD 5"},
	"GP": {1_690, 1_690, 1_110, "Aéroport Guadeloupe Pôle Caraïbes, redevances 2025: redevance passagers; taxe d'aéroport"},
	"GR": {1_700, 2_400, 340, "Athens International Airport, airport charges 2025: terminal passenger charge and airport development fund EU, non-EU; security charge"},
	"HK": {1_420, 1_420, 650, "Airport Authority Hong Kong, 2025: airport construction fee HKD 120; passenger security charge HKD 55"},
	"HR": {1_180, 1_180, 590, "Zagreb Airport (MZLZ), airport charges 2025: passenger charge; security charge"},
	"HU": {1_590, 1_590, 550, "Budapest Airport, airport charges 2025: passenger charge; security charge"},
	"ID": {960, 1_310, 0, "Angkasa Pura II, CGK passenger service charge 2025: international IDR 230,000, domestic IDR 168,000, security included"},
	"IE": {1_020, 1_020, 0, "daa, Dublin Airport charges 2025 (IAA determination): passenger charge, security included"},
	"IL": {3_310, 3_310, 0, "Israel Airports Authority, TLV departing passenger fee 2025: USD 36, security included"},
	"IN": {140, 670, 480, "AERA, Delhi user development fee 2025: international INR 620, domestic INR 129; aviation security fee (international)"},
	"IS": {1_250, 1_250, 730, "Isavia, Keflavík airport charges 2025: passenger charge ISK 1,900; security charge ISK 1,100"},
	"IT": {1_620, 2_280, 250, "Aeroporti di Roma, diritti aeroportuali 2025 (FCO): diritti d'imbarco UE, extra UE; controllo di sicurezza"},
	"JO": {2_500, 2_500, 650, "Airport International Group, AMM passenger service charge 2025: JOD 19; security JOD 5"},
	"JP": {270, 1_300, 320, "Narita International Airport, 2025: passenger service facility charge international JPY 2,130, domestic JPY 450; passenger security service charge JPY 530"},
	"KE": {430, 4_600, 460, "Kenya Airports Authority, 2025: air passenger service charge international USD 50, domestic KES 600; airport security charge USD 5"},
	"KR": {270, 1_140, 0, "Incheon International Airport, 2025: passenger service charge KRW 17,000, domestic (Gimpo) KRW 4,000, security included"},
	"LB": {4_600, 4_600, 0, "Beirut-Rafic Hariri International Airport, departing passenger charges 2025: USD 50, security included"},
	"LT": {920, 920, 380, "Lithuanian Airports, Vilnius airport charges 2025: passenger charge; security charge"},
	"LU": {1_540, 1_540, 680, "lux-Airport, Luxembourg airport charges 2025: passenger charge; security charge"},
	"LV": {1_140, 1_140, 490, "Riga International Airport, airport charges 2025: passenger charge; security charge"},
	"MA": {550, 1_840, 230, "ONDA, redevances aéroportuaires 2025 (CMN): redevance passagers international MAD 200, domestique MAD 60; sûreté MAD 25"},
	"MG": {3_680, 3_680, 550, "Ravinala Airports, Antananarivo redevances 2025: redevance passagers USD 40; sûreté USD 6"},
	"ML": {3_050, 3_050, 760, "ADM, Bamako-Sénou redevances 2025: redevance passagers XOF 20,000; sûreté XOF 5,000"},
	"MQ": {1_600, 1_600, 1_110, "Aéroport Martinique Aimé Césaire, redevances 2025: redevance passagers; taxe d'aéroport"},
	"MT": {1_800, 1_800, 400, "Malta International Airport, airport charges 2025: passenger service charge; security charge"},
	"MU": {2_400, 2_400, 400, "Airports of Mauritius, MRU passenger charges 2025: passenger fee; security fee"},
	"MX": {3_100, 5_200, 0, "AICM, tarifa de uso de aeropuerto 2025 (MEX): international MXN 1,040, domestic MXN 620, security included"},
	"MY": {220, 1_460, 0, "Malaysia Airports, KUL passenger service charge 2025: international MYR 73, domestic MYR 11, security included"},
	"NC": {1_930, 1_930, 1_010, "CCI Nouvelle-Calédonie, Nouméa-La Tontouta redevances 2025: redevance passagers XPF 2,300; taxe de sûreté XPF 1,200"},
	"NG": {60, 4_600, 370, "FAAN, Lagos passenger service charge 2025: international USD 50, domestic NGN 1,000; security charge USD 4"},
	"NL": {3_110, 3_690, 1_540, "Royal Schiphol Group, Schiphol Airport Charges and Conditions 2025-2026: passenger service charge EEA, non-EEA; security service charge"},
	"NO": {510, 1_190, 750, "Avinor, Oslo airport charges 2025: passenger charge domestic NOK 60, international NOK 140; security charge NOK 88"},
	"NZ": {220, 1_380, 990, "Auckland Airport, charges 2025: international passenger charge NZD 25, domestic NZD 4; Aviation Security Service charge NZD 18"},
	"PA": {3_680, 3_680, 0, "Tocumen, PTY passenger facility charge 2025: USD 40, security included"},
	"PE": {1_150, 3_170, 0, "Lima Airport Partners, TUUA 2025: international USD 34.50, domestic USD 12.50, security included"},
	"PF": {2_350, 2_350, 1_420, "Aéroport de Tahiti, redevances 2025: redevance passagers XPF 2,800; sûreté XPF 1,700"},
	"PH": {320, 880, 0, "MIAA, NAIA terminal fee 2025: international PHP 550, domestic PHP 200, security included"},
	"PL": {1_030, 1_350, 230, "PPL, Warsaw Chopin airport charges 2025: passenger charge Schengen PLN 44, non-Schengen PLN 58; security charge PLN 10"},
	"PT": {1_330, 1_860, 360, "ANA Aeroportos de Portugal (VINCI), Lisbon airport charges 2025: passenger charge Schengen, other; security charge"},
	"QA": {2_500, 2_500, 250, "Hamad International Airport, 2025: passenger facility charge and airport development fee QAR 100; security fee QAR 10"},
	"RE": {1_700, 1_700, 1_200, "Aéroport de La Réunion Roland Garros, redevances 2025: redevance passagers; taxe d'aéroport"},
	"RO": {1_250, 1_250, 640, "Compania Națională Aeroporturi București, OTP airport charges 2025: passenger charge; security charge"},
	"RS": {1_630, 1_630, 330, "Belgrade Airport (VINCI), airport charges 2025: passenger charge; security charge"},
	"RW": {3_680, 3_680, 0, "Rwanda Airports Company, KGL airport service charge 2025: USD 40, security included"},
	"SA": {250, 2_130, 0, "GACA, RUH airport building fee 2025: international SAR 87, domestic SAR 10, security included"},
	"SE": {850, 1_080, 610, "Swedavia, Stockholm Arlanda airport charges 2025: passenger charge domestic SEK 98, international SEK 124; security charge SEK 70"},
	"SG": {2_840, 2_840, 1_430, "Changi Airport Group, 2025: passenger service and security fee, service part SGD 41.50, security part SGD 20.80"},
	"SI": {1_500, 1_500, 650, "Fraport Slovenija, Ljubljana airport charges 2025: passenger charge; security charge"},
	"SN": {2_290, 2_290, 610, "AIBD SA, Dakar-Blaise Diagne redevances 2025: redevance passagers XOF 15,000; sûreté XOF 4,000"},
	"SR": {3_500, 3_500, 0, "NV Luchthavenbeheer, PBM passenger facility charge 2025: USD 38, security included"},
	"SX": {2_760, 2_760, 740, "Princess Juliana International Airport, SXM 2025: passenger facility charge USD 30; security charge USD 8"},
	"TH": {340, 1_900, 0, "Airports of Thailand, BKK passenger service charge 2025: international THB 730, domestic THB 130, security included"},
	"TN": {900, 900, 150, "OACA, Tunis-Carthage redevances 2025: redevance passagers TND 30; sûreté TND 5"},
	"TR": {410, 1_840, 180, "İGA, Istanbul Airport 2025: passenger service charge international USD 20, domestic USD 4.50; security charge USD 2"},
	"TW": {1_430, 1_430, 0, "Taoyuan International Airport, 2025: airport service charge TWD 500, security included"},
	"US": {410, 410, 520, "FAA passenger facility charge (14 CFR part 158) USD 4.50 per enplanement; TSA September 11th Security Fee (49 CFR part 1510) USD 5.60 per one-way trip"},
	"VN": {360, 2_300, 180, "ACV, Tan Son Nhat passenger service charge 2025: international USD 25, domestic VND 100,000; security USD 2"},
	"ZA": {1_100, 2_260, 100, "ACSA, aeronautical charges 2025-26 (JNB): passenger service charge international ZAR 452, domestic ZAR 220; passenger safety charge ZAR 20"},
}

// AirportCharges is what an airport of the country charges a departing passenger with a seat;
// ok is false for a country the table lacks (then no airport charge is shown).
func AirportCharges(country string) (AirportCharge, bool) {
	c, ok := airportCharges[country]
	return c, ok
}

// Near reports whether a departure from one country to another pays the near passenger service
// charge: a domestic one, or one between two countries of the EU or the Schengen area.
func Near(from, to *flightgraph.Country) bool {
	if from == nil || to == nil {
		return false
	}
	return from.Code == to.Code || (from.EU || from.Schengen) && (to.EU || to.Schengen)
}
