package dataset

// carriers are the two neutral demo carriers: XX based in Amsterdam and YY based in Paris. The
// names are invented and belong to no real airline.
var carriers = []carrierRow{
	{"XX", "Zuiderzee Airways", "AMS"},
	{"YY", "Belle Rive Airways", "CDG"},
}

// aircraftTypes is the demo fleet: real types with their IATA and ICAO codes, the haul they are
// flown on, a typical block speed and the range they are given routes up to with a commercial
// payload (well below the brochure range). WifiShare is the percentage of the type's
// configurations below that have wifi.
var aircraftTypes = []aircraftTypeRow{
	{"E90", "E190", "EMBRAER 190", "SH", 680, 3300, 0},
	{"E95", "E195", "EMBRAER 195", "SH", 690, 3300, 0},
	{"295", "E295", "EMBRAER 195-E2", "SH", 700, 4000, 100},
	{"223", "BCS3", "AIRBUS A220-300", "SH", 730, 5000, 100},
	{"319", "A319", "AIRBUS A319", "SH", 750, 4800, 0},
	{"320", "A320", "AIRBUS A320", "SH", 760, 5000, 0},
	{"73W", "B737", "BOEING 737-700 (WINGLETS)", "SH", 750, 4800, 0},
	{"32N", "A20N", "AIRBUS A320NEO", "MH", 770, 5800, 100},
	{"321", "A321", "AIRBUS A321", "MH", 770, 5500, 100},
	{"73H", "B738", "BOEING 737-800 (WINGLETS)", "MH", 770, 5000, 100},
	{"332", "A332", "AIRBUS A330-200", "LH", 830, 12000, 0},
	{"333", "A333", "AIRBUS A330-300", "LH", 830, 11000, 100},
	{"359", "A359", "AIRBUS A350-900", "LH", 860, 14500, 100},
	{"772", "B772", "BOEING 777-200/200 ER", "LH", 850, 13000, 100},
	{"77W", "B77W", "BOEING 777-300ER", "LH", 860, 13600, 100},
	{"789", "B789", "BOEING 787-9", "LH", 850, 14000, 100},
	{"781", "B78X", "BOEING 787-10", "LH", 845, 11800, 100},
}

// configurations are the aircraft configuration versions (ACVs) of both carriers. Each carrier
// has regional or short-haul layouts, at least one medium-haul narrowbody and several long-haul
// widebodies, one of them with a First cabin. Short-haul Business is European business (a
// narrowbody seat with the neighbouring seat kept free).
var configurations = []configurationRow{
	// XX, Zuiderzee Airways (AMS)
	{"E90", "E90", "XX", "Embraer 190 Regional cabin", false, []cabinRow{
		{"BUSINESS", 20, "REGIONAL-BUSINESS"}, {"ECONOMY", 80, "REGIONAL-ECONOMY"}}},
	{"E95", "E95", "XX", "Embraer 195 Regional cabin", false, []cabinRow{
		{"BUSINESS", 24, "REGIONAL-BUSINESS"}, {"ECONOMY", 96, "REGIONAL-ECONOMY"}}},
	{"295", "295", "XX", "Embraer 195-E2 Regional cabin", true, []cabinRow{
		{"BUSINESS", 20, "REGIONAL-BUSINESS"}, {"ECONOMY", 112, "REGIONAL-ECONOMY"}}},
	{"73W", "73W", "XX", "737-700 European cabin", false, []cabinRow{
		{"BUSINESS", 24, "SH-BUSINESS"}, {"ECONOMY", 118, "SH-ECONOMY"}}},
	{"73H", "73H", "XX", "737-800 European cabin with wifi", true, []cabinRow{
		{"BUSINESS", 36, "MH-BUSINESS"}, {"ECONOMY", 150, "MH-ECONOMY"}}},
	{"77W", "77W", "XX", "777-300ER Long-haul 2024 cabin with First", true, []cabinRow{
		{"FIRST", 4, "LH-FIRST"}, {"BUSINESS", 48, "LH-BUSINESS-2024"},
		{"PREMIUM", 32, "LH-PREMIUM"}, {"ECONOMY", 260, "LH-ECONOMY"}}},
	{"77X", "77W", "XX", "777-300ER Long-haul high-density cabin", true, []cabinRow{
		{"BUSINESS", 35, "LH-BUSINESS-CLASSIC"}, {"PREMIUM", 24, "LH-PREMIUM"},
		{"ECONOMY", 349, "LH-ECONOMY"}}},
	{"772", "772", "XX", "777-200ER Long-haul classic cabin", true, []cabinRow{
		{"BUSINESS", 34, "LH-BUSINESS-CLASSIC"}, {"PREMIUM", 24, "LH-PREMIUM"},
		{"ECONOMY", 230, "LH-ECONOMY"}}},
	{"789", "789", "XX", "787-9 Long-haul 2024 cabin", true, []cabinRow{
		{"BUSINESS", 30, "LH-BUSINESS-2024"}, {"PREMIUM", 21, "LH-PREMIUM"},
		{"ECONOMY", 224, "LH-ECONOMY"}}},
	{"78X", "781", "XX", "787-10 Long-haul 2024 cabin", true, []cabinRow{
		{"BUSINESS", 38, "LH-BUSINESS-2024"}, {"PREMIUM", 28, "LH-PREMIUM"},
		{"ECONOMY", 252, "LH-ECONOMY"}}},

	// YY, Belle Rive Airways (CDG)
	{"223", "223", "YY", "A220-300 European cabin", true, []cabinRow{
		{"BUSINESS", 20, "SH-BUSINESS"}, {"ECONOMY", 128, "SH-ECONOMY"}}},
	{"319", "319", "YY", "A319 European cabin", false, []cabinRow{
		{"BUSINESS", 24, "SH-BUSINESS"}, {"ECONOMY", 118, "SH-ECONOMY"}}},
	{"32A", "320", "YY", "A320 European cabin", false, []cabinRow{
		{"BUSINESS", 32, "SH-BUSINESS"}, {"ECONOMY", 146, "SH-ECONOMY"}}},
	{"32N", "32N", "YY", "A320neo Medium-haul cabin", true, []cabinRow{
		{"BUSINESS", 36, "MH-BUSINESS"}, {"ECONOMY", 144, "MH-ECONOMY"}}},
	{"321", "321", "YY", "A321 Medium-haul cabin", true, []cabinRow{
		{"BUSINESS", 40, "MH-BUSINESS"}, {"ECONOMY", 172, "MH-ECONOMY"}}},
	{"35F", "359", "YY", "A350-900 Long-haul cabin with First", true, []cabinRow{
		{"FIRST", 4, "LH-FIRST"}, {"BUSINESS", 32, "LH-BUSINESS-2024"},
		{"PREMIUM", 24, "LH-PREMIUM"}, {"ECONOMY", 232, "LH-ECONOMY"}}},
	{"359", "359", "YY", "A350-900 Long-haul 2024 cabin", true, []cabinRow{
		{"BUSINESS", 34, "LH-BUSINESS-2024"}, {"PREMIUM", 24, "LH-PREMIUM"},
		{"ECONOMY", 266, "LH-ECONOMY"}}},
	{"332", "332", "YY", "A330-200 Long-haul classic cabin", false, []cabinRow{
		{"BUSINESS", 36, "LH-BUSINESS-CLASSIC"}, {"ECONOMY", 188, "LH-ECONOMY-CLASSIC"}}},
	{"333", "333", "YY", "A330-300 Long-haul classic cabin", true, []cabinRow{
		{"BUSINESS", 30, "LH-BUSINESS-CLASSIC"}, {"PREMIUM", 24, "LH-PREMIUM"},
		{"ECONOMY", 238, "LH-ECONOMY"}}},
}

// products are the cabin products shared by the configurations of both carriers, one per kind of
// aircraft (regional, short-, medium- or long-haul), cabin class and generation. Products installed
// on a configuration without wifi do not mention wifi.
var products = []productRow{
	{"LH-FIRST", "FIRST", []amenityRow{
		{"seat", "FLATBED", "Private suite with a full-size bed", "Each of only four suites is enclosed by floor-to-ceiling curtains and turns into a fully flat bed of 81 in (206 cm), 30 in (76 cm) wide, made up with a mattress topper, a feather duvet and two pillows. A buddy ottoman lets a travel companion join you for dinner.", 100},
		{"meal", "MEALS", "Chef-signed dining on demand", "A six-course menu created with a guest chef is served on porcelain whenever you wish, from caviar and foie gras to a cheese trolley carved at your seat. Our head sommelier selects the wines, including a vintage Champagne.", 90},
		{"comfort", "LOUNGE", "Private lounge and car to the aircraft", "A dedicated check-in area leads to a private lounge at AMS and CDG with à la carte dining and a spa treatment, before a chauffeured car drives you across the apron to the aircraft stairs.", 80},
		{"meal", "BAR", "Champagne and cocktail service", "Signature cocktails, rare cognacs and small-batch gins are mixed to order throughout the flight, alongside freshly pressed juices and a tea selection from a Parisian tea house.", 70},
		{"entertainment", "IFE", "32-inch 4K screen", "A 32 in (81 cm) 4K touchscreen with more than 1,200 hours of films, series and podcasts, active noise-cancelling headphones and Bluetooth pairing for your own earbuds.", 60},
		{"connectivity", "WIFI", "Unlimited streaming wifi", "Complimentary gate-to-gate wifi on the fastest tier, good for video calls and streaming on up to three devices at once.", 50},
		{"connectivity", "POWER", "Power at every turn", "A universal AC outlet, two 60 W USB-C ports and a wireless charging pad are built into the side console, within reach whether you sit or lie down.", 45},
		{"comfort", "AMENITY_KIT", "Pyjamas and designer kit", "Organic cotton pyjamas, felt slippers and a leather case filled with skincare by a Provençal perfumer are yours to keep.", 40},
		{"comfort", "PRIORITY", "First off, bags first", "Boarding at your convenience, three checked bags of up to 32 kg (70 lb) each, delivered first on the belt, and an escort through immigration on arrival at the hub.", 30},
	}},
	{"LH-BUSINESS-2024", "BUSINESS", []amenityRow{
		{"seat", "FLATBED", "Business suite with a sliding door", "A 1-2-1 layout gives every seat direct aisle access; close the sliding door for privacy and recline into a 78 in (198 cm) fully flat bed. After the meal the crew lays out a memory-foam mattress pad.", 100},
		{"meal", "MEALS", "Three courses, served your way", "Pick from four main courses, one of them vegetarian, and pre-order yours in the app up to 24 hours before departure. Short on sleep? The express service brings the whole meal on one tray right after take-off.", 90},
		{"comfort", "LOUNGE", "Lounge access", "Our lounges at AMS and CDG and partner lounges at outstations offer hot dishes, showers and quiet rooms before you fly, and you may bring one guest on your own ticket.", 80},
		{"entertainment", "IFE", "24-inch HD screen", "A 24 in (61 cm) HD touchscreen with a separate touch remote, Bluetooth audio and noise-cancelling headphones, with more than 1,000 hours of content in 12 languages.", 60},
		{"connectivity", "WIFI", "Complimentary wifi", "Browsing and email are free for the whole flight; upgrade on board to the streaming tier for video calls and films from your own subscriptions.", 50},
		{"connectivity", "USB", "Charge everything", "A 110 V universal outlet, a 60 W USB-C port and a USB-A port sit next to a side shelf large enough for a 15 in laptop.", 45},
		{"comfort", "AMENITY_KIT", "Amenity kit and bedding", "A kit in recycled fabric holds lip balm, hand cream, an eye mask, socks and earplugs; a full-size duvet and two pillows wait at your seat.", 40},
		{"comfort", "PRIORITY", "Priority services", "Dedicated check-in desks, fast-track security where available, boarding in group 1 and two checked bags of up to 32 kg (70 lb) each.", 30},
	}},
	{"LH-BUSINESS-CLASSIC", "BUSINESS", []amenityRow{
		{"seat", "FLATBED", "Full-flat seat", "The seat converts into a 76 in (193 cm) fully flat bed, 21 in (53 cm) wide, with adjustable lumbar support and a massage function. Most aircraft have a staggered 1-2-1 layout; the A330-200 keeps a 2-2-2 layout.", 100},
		{"meal", "MEALS", "Seasonal menus", "Menus change every three months and follow the seasons of the departure region: a starter, a choice of three hot mains, cheese and dessert, paired with wines from small family estates.", 90},
		{"comfort", "LOUNGE", "Relax before you fly", "Enjoy our hub lounges at AMS and CDG or a partner lounge at your departure airport, with a buffet, a bar and workspaces.", 80},
		{"entertainment", "IFE", "18.5-inch screen", "An 18.5 in (47 cm) screen with more than 700 hours of films and series, kids' channels and a live moving map with tail-camera views.", 60},
		{"connectivity", "POWER", "In-seat power", "Every seat has a universal power outlet and a USB-A port, so laptops and phones stay charged; the crew can lend you a travel adapter.", 50},
		{"comfort", "AMENITY_KIT", "Comfort kit", "A cotton pouch with toothbrush, socks, eye mask and earplugs, plus a large pillow and a light duvet; slippers are added on flights over eight hours.", 40},
		{"comfort", "PRIORITY", "Priority at the airport", "Business check-in, priority boarding and two checked bags of up to 32 kg (70 lb), tagged priority so they come off the aircraft first.", 30},
	}},
	{"LH-PREMIUM", "PREMIUM", []amenityRow{
		{"seat", "SEAT", "Wider recliner with leg rest", "Up to 38 in (97 cm) of pitch and 19.5 in (49.5 cm) of width, a 7 in (18 cm) recline and an adjustable calf and foot rest, in a separate, quiet cabin of 21 to 32 seats.", 100},
		{"meal", "MEALS", "Elevated dining", "A welcome drink is followed by a three-course meal on china with metal cutlery and a choice of red and white wine; a second hot meal or a hearty snack is served before landing.", 90},
		{"entertainment", "IFE", "13-inch screen", "A 13.3 in (34 cm) HD touchscreen with noise-reducing headphones and a personal remote in the armrest.", 60},
		{"connectivity", "WIFI", "Messaging included", "A free messaging pass keeps you in touch for the whole flight; browsing passes by the hour or for the whole journey can be bought on board.", 50},
		{"connectivity", "USB", "Power and USB-C", "A universal power outlet and a USB-C port at every seat, with a phone holder beneath the screen.", 45},
		{"comfort", "AMENITY_KIT", "Amenity pouch", "A reusable pouch with eye mask, socks, earplugs and a dental kit, a larger pillow and a fleece blanket.", 40},
		{"comfort", "PRIORITY", "Priority boarding", "Dedicated check-in desks, boarding in group 2 and two checked bags of 23 kg (50 lb) each.", 30},
	}},
	{"LH-ECONOMY", "ECONOMY", []amenityRow{
		{"seat", "SEAT", "Ergonomic seat", "A 31 in (79 cm) pitch, a 17.3 in (44 cm) wide seat with a 5 in (13 cm) recline and a six-way adjustable headrest with folding wings for sleeping upright.", 100},
		{"seat", "EXTRA_LEGROOM", "Economy Extra rows", "Seats in the front rows of economy offer up to 35 in (89 cm) of pitch and twice the recline; book them from booking until check-in closes.", 95},
		{"meal", "MEALS", "Hot meals and free drinks", "A hot meal with a choice of two mains, complimentary beer, wine and soft drinks, and a breakfast or snack before landing. Vegetarian, halal, kosher and 15 other special meals can be ordered up to 24 hours before departure.", 90},
		{"entertainment", "IFE", "11.6-inch screen", "An 11.6 in (29.5 cm) HD touchscreen in every seatback with films, box sets, games and a kids' zone, plus a Bluetooth link for wireless headphones.", 60},
		{"connectivity", "WIFI", "Free messaging, paid browsing", "Text messaging is free for every passenger; browsing and streaming passes are sold on board by the hour or for the whole flight.", 50},
		{"connectivity", "USB", "USB charging", "A USB-A and a USB-C port in every seatback charge phones and tablets; universal power outlets are shared between two seats.", 45},
		{"comfort", "BEDDING", "Pillow and blanket", "A pillow, a blanket made of recycled bottles and in-ear headphones are waiting on your seat; ask for an eye mask and earplugs.", 40},
	}},
	{"LH-ECONOMY-CLASSIC", "ECONOMY", []amenityRow{
		{"seat", "SEAT", "2-4-2 layout", "The A330 cabin has pairs of seats at the windows, ideal for couples, with 31 in (79 cm) of pitch, a 17.5 in (44.5 cm) wide seat and a 6 in (15 cm) recline.", 100},
		{"meal", "MEALS", "Aperitif and hot meal", "The service starts with an aperitif and salted snacks, followed by a hot meal with wine; on night flights an ice cream is handed out before the lights dim.", 90},
		{"entertainment", "IFE", "9-inch personal screen", "A 9 in (23 cm) personal screen with around 400 hours of films, series and music, and games for all ages.", 60},
		{"connectivity", "USB", "USB socket", "A USB-A socket below the screen keeps your phone topped up; bring a power bank for a laptop.", 50},
		{"comfort", "BEDDING", "Blanket and headphones", "A soft blanket, a pillow and headphones are provided on every seat; the crew passes with water and juice throughout the night.", 40},
	}},
	{"MH-BUSINESS", "BUSINESS", []amenityRow{
		{"seat", "SEAT", "Guaranteed free middle seat", "A leather seat with 34 in (86 cm) of pitch and the middle seat kept free as a table, with an adjustable headrest and a footrest in the first row.", 100},
		{"meal", "MEALS", "Hot meal on flights over two hours", "Flights longer than two hours serve a hot main with starter and dessert; on shorter sectors a cold plated meal and warm bread are served.", 90},
		{"meal", "BAR", "Full bar", "Champagne, wines, spirits and a selection of local craft beers are offered throughout the flight.", 70},
		{"comfort", "LOUNGE", "Lounge access", "Hub lounges at AMS and CDG, and partner lounges at most other airports, are open to you before every medium-haul flight.", 80},
		{"entertainment", "STREAMING", "Stream to your device", "Films, series and magazines are streamed free of charge to your phone, tablet or laptop through the on-board portal.", 60},
		{"connectivity", "WIFI", "Complimentary wifi", "Browsing and email are included in Business for the whole flight, from gate to gate.", 50},
		{"connectivity", "USB", "USB-C at every seat", "Every seat has a USB-C port; the A320neo and A321 also offer a universal power outlet.", 45},
		{"comfort", "PRIORITY", "Priority services", "Priority check-in, fast-track security where available, priority boarding and two checked bags of 32 kg (70 lb).", 30},
	}},
	{"MH-ECONOMY", "ECONOMY", []amenityRow{
		{"seat", "SEAT", "Slimline seat", "A slimline seat with 30 in (76 cm) of pitch, a 17 in (43 cm) seat width and an adjustable headrest; thinner seatbacks leave more knee room.", 100},
		{"meal", "MEALS", "Complimentary snack and drinks", "A sandwich or wrap with soft drinks, coffee and tea is free on every flight; hot dishes and wine can be bought from the menu on board.", 90},
		{"entertainment", "STREAMING", "Streaming entertainment", "Around 150 films and series and a live flight map can be streamed to your own device through the free on-board portal.", 60},
		{"connectivity", "WIFI", "Messaging pass", "Messaging is free for the whole flight; a browsing pass can be bought on board by card.", 50},
		{"connectivity", "USB", "USB charging", "USB-C sockets on the A320neo and A321 and USB-A sockets on the 737-800 keep your phone charged.", 45},
		{"comfort", "CABIN_BAG", "Cabin bag included", "A cabin bag of up to 12 kg (26 lb) and a personal item that fits under the seat in front are included in every fare.", 40},
	}},
	{"SH-BUSINESS", "BUSINESS", []amenityRow{
		{"seat", "SEAT", "More space around you", "The seat next to you stays free on every flight, with 32 in (81 cm) of pitch in the first rows of the cabin.", 100},
		{"meal", "MEALS", "Fresh cold meal", "A seasonal cold meal prepared by a local caterer, with a hot breakfast on morning flights over 75 minutes and wine or Champagne on request.", 90},
		{"comfort", "LOUNGE", "Lounge before departure", "Access to our lounges at AMS and CDG and to partner lounges across Europe, with espresso bar, snacks and newspapers.", 80},
		{"entertainment", "PRESS", "Digital newspapers", "Download up to 20 newspapers and magazines in the app from 30 hours before departure and read them offline.", 50},
		{"comfort", "PRIORITY", "Priority from kerb to seat", "Priority check-in, fast-track security, priority boarding and a checked bag of 32 kg (70 lb) are included.", 30},
	}},
	{"SH-ECONOMY", "ECONOMY", []amenityRow{
		{"seat", "SEAT", "Comfortable seat", "A seat with 29 to 30 in (74 to 76 cm) of pitch; on the A220 the seats are 18.5 in (47 cm) wide, among the widest on short-haul jets.", 100},
		{"meal", "MEALS", "Drink and snack", "A complimentary hot or cold drink with a sweet or savoury snack is served on every flight, whatever its length.", 90},
		{"entertainment", "PRESS", "Free magazines in the app", "A choice of digital magazines to download before you board, including the in-flight magazine and kids' comics.", 50},
		{"comfort", "CABIN_BAG", "Hand luggage", "One cabin bag of up to 12 kg (26 lb) and a handbag or laptop bag are included; larger items can be checked at the gate for free when the flight is full.", 40},
	}},
	{"REGIONAL-BUSINESS", "BUSINESS", []amenityRow{
		{"seat", "SEAT", "No middle seats", "Every seat on our Embraer jets is a window or an aisle seat, and in Business the seat beside you is kept free whenever possible, with 32 in (81 cm) of pitch.", 100},
		{"meal", "MEALS", "Light meal", "A light plated meal of local produce, such as smoked fish, cheeses and a pastry, with wine, beer or a soft drink.", 90},
		{"comfort", "LOUNGE", "Lounge access", "Unwind in our lounges at AMS and CDG or a partner lounge at regional airports before your flight.", 80},
		{"comfort", "PRIORITY", "Board first", "Priority check-in and boarding, so you find space for your coat, and a checked bag of 32 kg (70 lb).", 30},
	}},
	{"REGIONAL-ECONOMY", "ECONOMY", []amenityRow{
		{"seat", "SEAT", "Window or aisle", "The 2-2 layout means no middle seats, and at 18.25 in (46 cm) the Embraer seats are wider than on most narrowbodies, with 30 in (76 cm) of pitch.", 100},
		{"meal", "MEALS", "Coffee and a biscuit", "Coffee, tea, water or juice with a traditional caramel waffle biscuit, served on every flight.", 90},
		{"comfort", "CABIN_BAG", "Planeside bag drop", "The overhead bins of regional jets are compact: trolley bags are tagged at the aircraft door and handed back on the jet bridge on arrival, free of charge.", 40},
		{"entertainment", "PRESS", "Reading on board", "The in-flight magazine and a daily newspaper are available for download in the app before you board.", 30},
	}},
}
